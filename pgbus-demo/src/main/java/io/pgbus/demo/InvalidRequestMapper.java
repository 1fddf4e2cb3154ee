package io.pgbus.demo;

import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;
import java.util.Map;

/** Answers a request parameter out of bounds with 400 and what is allowed. */
@Provider
public class InvalidRequestMapper
    implements ExceptionMapper<RequestLimits.InvalidRequestException> {

  @Override
  public Response toResponse(RequestLimits.InvalidRequestException e) {
    return Response.status(Response.Status.BAD_REQUEST)
        .type(MediaType.APPLICATION_JSON)
        .entity(Map.of("error", e.getMessage()))
        .build();
  }
}
