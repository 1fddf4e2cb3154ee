/**
 * The pgbus command line: one class per command ({@link io.pgbus.cli.Command}), run by {@link
 * io.pgbus.cli.Cli}, which reads the servers' configuration keys from flags, system properties and
 * environment variables ({@link io.pgbus.cli.CliConfig}) and maps every failure to an exit code for
 * CI. The SQL is pgbus-impl's: its stores, migrator, doctor and deploy gate.
 */
package io.pgbus.cli;
