package io.pgbus.jakarta.admin;

import jakarta.json.bind.annotation.JsonbPropertyOrder;

/**
 * The body of every refusal and failure of the admin API (docs/admin-api.md, "Errors"): {@code
 * {"error":"bad-request","field":"state","message":"..."}}. {@code field} and {@code message} are
 * left out when null, never written as null. Public only because JSON-B reads it by reflection.
 *
 * @param error the category: {@code bad-request}, {@code unauthenticated}, {@code forbidden},
 *     {@code csrf}, {@code not-found}, {@code too-large}, {@code search-timeout}, {@code
 *     rate-limited}, {@code internal}
 * @param field the input it names, or null
 * @param message what was wrong and how to fix it, or null (never for {@code internal})
 */
@JsonbPropertyOrder({"error", "field", "message"})
public record Problem(String error, String field, String message) {}
