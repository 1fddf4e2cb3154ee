/**
 * The pgbus command line: one class per command, run by {@code Cli}, which reads the servers'
 * configuration keys from flags, system properties and environment variables ({@code CliConfig})
 * and maps every outcome to an exit code for CI. The SQL is pgbus-impl's: its stores, migrator,
 * doctor and deploy gate; only the two functions of issue #28 are called here ({@code Diagnosis}).
 */
package io.pgbus.cli;
