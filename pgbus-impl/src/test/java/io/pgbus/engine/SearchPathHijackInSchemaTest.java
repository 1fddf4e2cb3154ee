package io.pgbus.engine;

import io.pgbus.engine.testing.TestDatabase;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every case of {@link SearchPathHijackTest} for an instance in another schema ({@code
 * pgbus.schema=tenant_b}): its functions pin {@code pg_catalog, tenant_b, pg_temp}, and its
 * statements, mapped from the text written against {@code pgbus.}, resolve nothing through the
 * caller's path. The look-alikes in public are the same; those over pgbus's own types are planted
 * for the default schema's types only.
 */
class SearchPathHijackInSchemaTest extends SearchPathHijackTest {

  @RegisterExtension
  static final TestDatabase tenant = TestDatabase.migrated().inSchema("tenant_b");

  @Override
  TestDatabase db() {
    return tenant;
  }
}
