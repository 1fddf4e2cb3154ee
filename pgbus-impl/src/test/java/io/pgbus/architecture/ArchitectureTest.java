package io.pgbus.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import io.pgbus.jakarta.HandledJob;
import org.junit.jupiter.api.Test;

/**
 * The layering the style guide promises: the engine runs in plain Java SE and knows nothing of the
 * container, and only the Jakarta adapter talks to Jakarta EE and MicroProfile.
 */
class ArchitectureTest {

  private static final JavaClasses PGBUS =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.pgbus");

  @Test
  void theEngineImportsNoContainerApi() {
    noClasses()
        .that()
        .resideInAPackage("io.pgbus.engine..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "jakarta..", "javax.ejb..", "javax.enterprise..", "org.eclipse.microprofile..")
        .because(
            "the engine must run and be tested in plain Java SE; adapters live in io.pgbus.jakarta")
        .check(PGBUS);
  }

  @Test
  void theEngineDoesNotReachIntoTheAdapter() {
    noClasses()
        .that()
        .resideInAPackage("io.pgbus.engine..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("io.pgbus.jakarta..")
        .check(PGBUS);
  }

  /**
   * What a handler may ask is passed to it (RunningJob), and the parent of a job enqueued from a
   * handler is named in the request (NewJob): one thread-local is left, at the edge where the
   * adapter calls a handler, for JobQueue, whose methods take no context.
   */
  @Test
  void onlyTheAdaptersHandlerEdgeKeepsAThreadLocal() {
    noClasses()
        .that()
        .doNotHaveFullyQualifiedName(HandledJob.class.getName())
        .should()
        .dependOnClassesThat()
        .areAssignableTo(ThreadLocal.class)
        .because("state a thread-local carries is hidden from the code that reads it (issue #24)")
        .check(PGBUS);
  }

  @Test
  void thePublicApiDependsOnNothingButTheJdk() {
    noClasses()
        .that()
        .resideInAPackage("io.pgbus")
        .should()
        .dependOnClassesThat()
        .resideOutsideOfPackages("io.pgbus", "java..")
        .because("applications compile against pgbus-api alone")
        .check(PGBUS);
  }

  /**
   * Weld warns (WELD-001471, on every deploy) about a {@code @PostConstruct} or {@code @PreDestroy}
   * that declares a checked exception: the interceptor specification forbids it on a lifecycle
   * callback of a bean class.
   */
  @Test
  void lifecycleCallbacksDeclareNoCheckedException() {
    methods()
        .that(lifecycleCallbacks())
        .should(declareNoCheckedException())
        .because("Weld logs WELD-001471 for each such callback on every deployment")
        .check(PGBUS);
  }

  private static DescribedPredicate<JavaMethod> lifecycleCallbacks() {
    return DescribedPredicate.describe(
        "are @PostConstruct or @PreDestroy callbacks",
        m ->
            m.isAnnotatedWith("jakarta.annotation.PostConstruct")
                || m.isAnnotatedWith("jakarta.annotation.PreDestroy"));
  }

  private static ArchCondition<JavaMethod> declareNoCheckedException() {
    return new ArchCondition<>("declare no checked exception") {
      @Override
      public void check(JavaMethod method, ConditionEvents events) {
        method.getThrowsClause().getTypes().stream()
            .filter(
                t -> !t.isAssignableTo(RuntimeException.class) && !t.isAssignableTo(Error.class))
            .forEach(
                t ->
                    events.add(
                        SimpleConditionEvent.violated(
                            method, method.getFullName() + " throws " + t.getName())));
      }
    };
  }
}
