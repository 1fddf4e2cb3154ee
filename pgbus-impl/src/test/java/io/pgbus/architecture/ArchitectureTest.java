package io.pgbus.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The layering the style guide promises: the engine runs in plain Java SE and knows nothing of
 * the container, and only the Jakarta adapter talks to Jakarta EE and MicroProfile.
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
        .resideInAnyPackage("jakarta..", "javax.ejb..", "javax.enterprise..", "org.eclipse.microprofile..")
        .because("the engine must run and be tested in plain Java SE; adapters live in io.pgbus.jakarta")
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
}
