package io.pgbus.admin;

import java.util.List;

/**
 * One page of a job search, newest job first.
 *
 * @param jobs up to the page size of jobs, highest id first, without payloads and errors
 * @param next the cursor for the next page (pass it as {@code before}), or null on the last page
 */
public record JobPage(List<JobView> jobs, Long next) {
  public JobPage {
    jobs = List.copyOf(jobs);
  }
}
