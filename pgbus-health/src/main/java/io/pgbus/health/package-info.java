/**
 * pgbus's MicroProfile Health checks, {@code pgbus} (readiness) and {@code pgbus-capsules}
 * (liveness), apart from the engine: the runtime in pgbus-impl publishes its state through {@link
 * io.pgbus.health.PgbusHealth}, and the two beans here report it.
 *
 * <p>Why a jar of its own: WildFly's MicroProfile Health finds {@code @Readiness} beans only in the
 * top-level deployment, which in an EAR is its {@code lib/} directory, never a WAR inside it
 * (WFLY-12835; its CDI extension sees the root module's bean archives only). pgbus-impl must stay
 * in the WAR (its startup singleton is an EJB, and EJBs in {@code lib/} are not deployed), so an
 * EAR puts this jar into {@code lib/} and pgbus-impl into the WAR. A WAR on its own carries both.
 */
package io.pgbus.health;
