package io.pgbus.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;

class StaticFileTest {

  private static final String MODULE = "export const x = 1;\n".repeat(200);

  @Test
  void theChartLibraryGoesOutGzippedAtATenthOfItsSizeWhenTheBrowserAsksForGzip()
      throws IOException {
    StaticFile echarts =
        StaticFile.read(
            "META-INF/pgbus-console-lib/META-INF/resources/webjars/echarts/5.3.1/dist/echarts.min.js",
            "text/javascript");
    assertThat(echarts).isNotNull();
    byte[] z = echarts.gzippedFor("gzip, deflate, br");
    assertThat(z.length).isLessThan(echarts.plain().length / 3);
    assertThat(new GZIPInputStream(new ByteArrayInputStream(z)).readAllBytes())
        .isEqualTo(echarts.plain());
  }

  @Test
  void sendsPlainBytesWhenGzipIsNotAskedForOrRefused() {
    var file = new StaticFile(MODULE.getBytes(StandardCharsets.UTF_8), "text/javascript");
    assertThat(file.gzippedFor(null)).isNull();
    assertThat(file.gzippedFor("identity")).isNull();
    assertThat(file.gzippedFor("br, gzip;q=0")).isNull();
    assertThat(file.gzippedFor("gzip; q=0.000")).isNull();
    assertThat(file.gzippedFor("br, GZIP;q=0.5")).isNotNull();
  }

  @Test
  void keepsASmallFilePlainBecauseGzipWouldNotPay() {
    var tiny = new StaticFile("export {};".getBytes(StandardCharsets.UTF_8), "text/javascript");
    assertThat(tiny.gzippedFor("gzip")).isNull();
  }

  @Test
  void itsEtagNamesTheBytesSoANewBuildGetsANewOne() {
    var a = new StaticFile(MODULE.getBytes(StandardCharsets.UTF_8), "text/javascript");
    var same = new StaticFile(MODULE.getBytes(StandardCharsets.UTF_8), "text/javascript");
    var changed = new StaticFile((MODULE + "//").getBytes(StandardCharsets.UTF_8), "x");
    assertThat(a.etag())
        .isEqualTo(same.etag())
        .isNotEqualTo(changed.etag())
        .matches("\"[0-9a-f]{24}\"");
    assertThat(a.matches(a.etag())).isTrue();
    assertThat(a.matches("\"other\", " + a.etag())).isTrue();
    assertThat(a.matches("W/" + a.etag())).isTrue();
    assertThat(a.matches(changed.etag())).isFalse();
    assertThat(a.matches(null)).isFalse();
  }
}
