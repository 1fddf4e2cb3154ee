package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code pgbus.schema}: which names are refused, and how SQL, channels and lock keys map. */
class SchemaNameTest {

  private static final SchemaName TENANT = SchemaName.of("tenant_b");

  @Test
  void theDefaultSchemaMapsNothing() {
    String sql = "SELECT pgbus.claim(?) FROM pgbus.job WHERE x = 'pgbus_' SET search_path = pgbus";
    assertThat(SchemaName.of("pgbus")).isSameAs(SchemaName.DEFAULT);
    assertThat(SchemaName.DEFAULT.sql(sql)).isSameAs(sql);
    assertThat(SchemaName.DEFAULT.channel("pgbus_mail")).isEqualTo("pgbus_mail");
    assertThat(SchemaName.DEFAULT.unchannel("tenant_b:_mail")).isEqualTo("tenant_b:_mail");
    assertThat(SchemaName.DEFAULT.lockKey(0x7067627573L)).isEqualTo(0x7067627573L);
  }

  @Test
  void qualifiedNamesCustomSettingsAndThePinnedPathMapToTheSchema() {
    assertThat(
            TENANT.sql(
                "SELECT pgbus.enqueue(?::pgbus.queue_name), pg_catalog.set_config('pgbus.wake',"
                    + " 'client', true) FROM pgbus.job j"))
        .isEqualTo(
            "SELECT tenant_b.enqueue(?::tenant_b.queue_name),"
                + " pg_catalog.set_config('tenant_b.wake', 'client', true) FROM tenant_b.job j");
    assertThat(TENANT.sql("LANGUAGE sql SET search_path = pg_catalog, pgbus, pg_temp"))
        .isEqualTo("LANGUAGE sql SET search_path = pg_catalog, tenant_b, pg_temp");
    assertThat(TENANT.sql("WHERE n.oid = 'pgbus'::regnamespace"))
        .isEqualTo("WHERE n.oid = 'tenant_b'::regnamespace");
  }

  @Test
  void channelLiteralsMapLikeTheChannelsTheListenerHears() {
    assertThat(TENANT.sql("AS $$ SELECT 'pgbus_' || queue::text $$"))
        .isEqualTo("AS $$ SELECT 'tenant_b:_' || queue::text $$");
    assertThat(TENANT.sql("EXECUTE FUNCTION pgbus.tell_engines('pgbus-queues')"))
        .isEqualTo("EXECUTE FUNCTION tenant_b.tell_engines('tenant_b:-queues')");
    assertThat(TENANT.channel(Channels.queue("mail"))).isEqualTo("tenant_b:_mail");
    assertThat(TENANT.channel(Channels.CANCEL)).isEqualTo("tenant_b:-cancel");
    assertThat(TENANT.unchannel("tenant_b:-cancel")).isEqualTo(Channels.CANCEL);
    assertThat(TENANT.unchannel("tenant_b:_mail")).isEqualTo("pgbus_mail");
    // Another instance's channel stays foreign: neither a queue's nor a fixed one here.
    assertThat(TENANT.unchannel("tenant_c:_mail")).isEqualTo("tenant_c:_mail");
  }

  @Test
  void messagesConfigurationKeysAndLongerNamesAreLeftAlone() {
    String sql =
        "RAISE EXCEPTION 'pgbus: the worker id % is invalid (pgbus.worker-id), see"
            + " pgbus.history.retention and pgbus.maintenance=true' FROM my_pgbus.x, \"pgbus\".y,"
            + " a.pgbus.z, pgbus2.w, j.payload ->> 'pgbus.enc'";
    assertThat(TENANT.sql(sql)).isEqualTo(sql);
  }

  @Test
  void aLongSchemaKeepsEveryChannelWithinPostgresqlsLimit() {
    SchemaName longest = SchemaName.of("a".repeat(63));
    String channel = longest.channel(Channels.queue("q".repeat(48)));
    assertThat(channel.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(63);
    assertThat(longest.unchannel(channel)).isEqualTo(Channels.queue("q".repeat(48)));
    assertThat(SchemaName.of("a".repeat(62) + "b").channel(Channels.CANCEL))
        .isNotEqualTo(longest.channel(Channels.CANCEL));
  }

  @Test
  void eachSchemaHasItsOwnLockKeys() {
    assertThat(TENANT.lockKey(1))
        .isNotEqualTo(1)
        .isNotEqualTo(SchemaName.of("tenant_c").lockKey(1));
    assertThat(TENANT.lockKey(1)).isEqualTo(SchemaName.of("tenant_b").lockKey(1));
  }

  @Test
  void aNameThatIsNoLowerCaseIdentifierFailsNamingTheKeyTheValueAndTheFix() {
    assertThatThrownBy(() -> SchemaName.of("billing-jobs"))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessage(
            "pgbus.schema=billing-jobs is not an SQL identifier: use a lower-case SQL identifier"
                + " of at most 63 bytes (a letter or _, then letters, digits or _), such as pgbus"
                + " or billing_jobs, or remove the key for the default schema pgbus");
    assertThatThrownBy(() -> SchemaName.of("Billing"))
        .hasMessageStartingWith(
            "pgbus.schema=Billing has upper-case letters, which PostgreSQL folds to lower case:");
    assertThatThrownBy(() -> SchemaName.of("a".repeat(64)))
        .hasMessageContaining("is longer than 63 bytes");
    assertThatThrownBy(() -> SchemaName.of(" ")).hasMessageStartingWith("pgbus.schema=  is empty:");
  }

  @Test
  void sharedAndReservedSchemasAreRefused() {
    for (String name : new String[] {"public", "information_schema", "pg_catalog", "pg_bus"}) {
      assertThatThrownBy(() -> SchemaName.of(name))
          .as(name)
          .hasMessageStartingWith(
              "pgbus.schema=" + name + " is a schema PostgreSQL or every role shares:");
    }
    assertThatThrownBy(() -> SchemaName.of("plpgsql"))
        .hasMessageStartingWith("pgbus.schema=plpgsql is a setting prefix PL/pgSQL reserves:");
  }
}
