package io.pgbus.jakarta;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.BeforeDestroyed;
import jakarta.enterprise.event.Observes;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Starts the runtime's stop (stop claiming, drain, release what still runs) at the first sign that
 * the application is going away, before the container waits for the job threads.
 *
 * <p>WildFly stops an EJB component only once every call into it has returned, and a running job is
 * such a call (its {@code REQUIRES_NEW} or {@code NOT_SUPPORTED} method of {@link
 * JobTransactions}). Left to its {@code @PreDestroy}, the runtime drained only after the container
 * had waited for the longest job, so an undeploy lasted as long as that job. CDI's application
 * context ends earlier: this observer of {@code @BeforeDestroyed(ApplicationScoped.class)} starts
 * the drain from there; the runtime's {@code @PreDestroy} remains for a server that destroys the
 * bean first (Open Liberty). No servlet listener: an application whose server exposes no servlet
 * API (a Liberty server with restfulWS but no servlet feature) could not load one.
 */
@ApplicationScoped
public class UndeployDrain {

  private volatile Consumer<String> stop;

  /** Called by the runtime at start: what stopping means (told which hook asked). */
  void attach(Consumer<String> stop) {
    this.stop = Objects.requireNonNull(stop);
  }

  /** The application is going away ({@code why} names the hook): stop the runtime, once. */
  void begin(String why) {
    Consumer<String> s = stop;
    if (s != null) {
      s.accept(why);
    }
  }

  void beforeDestroyed(@Observes @BeforeDestroyed(ApplicationScoped.class) Object event) {
    begin("the application context ends");
  }
}
