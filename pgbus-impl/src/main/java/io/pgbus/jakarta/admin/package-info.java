/**
 * The operator surface: the REST admin API that the console and operators call (docs/admin-api.md).
 * {@link io.pgbus.jakarta.admin.AdminResource} is the root an application subclasses at a path of
 * its choice; it hands each area to a sub-resource made per request ({@code JobsResource}, {@code
 * QueuesResource}, {@code QueueLimitResource}, {@code LinksResource}, {@code SchedulesResource},
 * {@code FleetResource}), each with the reads it needs ({@code JobAdmin}, {@code JobQueue}, {@code
 * Schedules}, the engine's {@code EngineStatus}, the engine's {@code Fleet}, {@code JobLinks} and
 * {@code QueueLimits}) and one {@code AdminCall} that checks the roles and the CSRF token, masks
 * payloads and turns failures into the documented error bodies. No resource opens a store of its
 * own. A search by handler ({@code HandlerQueues}) stands for the queues the handler is bound to in
 * this application.
 *
 * <p>Answers are small records that JSON-B writes; their property order, and which nulls are
 * written and which left out, are declared on them ({@code @JsonbPropertyOrder},
 * {@code @JsonbNillable}), and {@code AdminCall} writes them with its own JSON-B (WildFly's
 * provider is Jackson, which would ignore both), since the console reads that wire format (pinned
 * by {@code AdminApiIT} and {@code AdminJsonTest}). The resources and records are public only
 * because JAX-RS and JSON-B reach them by reflection; their constructors are package-private.
 * Request bounds live here too: {@code RequestBody} (bodies by size before reading), {@code
 * SearchBudget} (payload searches per user), {@code AdminParams} (query parameters).
 */
package io.pgbus.jakarta.admin;
