package io.pgbus.it;

import io.pgbus.JobQueue;
import jakarta.ejb.Stateless;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * PoolerIT's enqueue: {@code n} jobs in one container-managed (JTA) transaction of this EJB,
 * through the JobQueue on the datasource behind PgBouncer; every {@code failEvery}-th one fails its
 * first attempt. Answers the ids, comma-separated.
 */
@Stateless
@Path("pooler")
public class PoolerEndpoint {

  @Inject JobQueue jobs;

  @POST
  @Path("enqueue")
  public String enqueue(
      @QueryParam("prefix") String prefix,
      @QueryParam("n") int n,
      @QueryParam("failEvery") int failEvery) {
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      boolean fail = failEvery > 0 && i % failEvery == 0;
      ids.add(jobs.enqueue(PoolerHandler.QUEUE, new Marker(prefix + "-" + i, fail)));
    }
    return ids.stream().map(String::valueOf).collect(Collectors.joining(","));
  }
}
