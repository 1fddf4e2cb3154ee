package io.pgbus.it.support;

import java.util.List;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/** Adds a microprofile-config.properties to a test WAR. */
public final class Config {
  private Config() {}

  public static WebArchive with(WebArchive war, List<String> lines) {
    return war.addAsResource(
        new StringAsset(String.join("\n", lines) + "\n"),
        "META-INF/microprofile-config.properties");
  }
}
