package io.pgbus.it;

import io.pgbus.it.support.TestServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.function.Function;
import java.util.logging.Level;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.TimeoutException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * A headless Chromium driven by Selenium (Debian's chromium and chromium-driver, see
 * docs/console.md), one per user, that saves screenshots to {@code
 * target/console-screenshots/<server>}. Paths can be moved with the system properties {@code
 * pgbus.it.chromium} and {@code pgbus.it.chromedriver}.
 */
final class Browser implements AutoCloseable {
  static final Path SCREENSHOTS =
      Paths.get("target", "console-screenshots", TestServer.current().label());

  /**
   * Selenium warns on every session that it has no DevTools binding for this Chromium version; the
   * test uses WebDriver only. Held here so the logger (and its level) is not collected.
   */
  private static final java.util.logging.Logger CDP_LOG =
      quiet(java.util.logging.Logger.getLogger("org.openqa.selenium.devtools"));

  private final ChromeDriver driver;

  private static java.util.logging.Logger quiet(java.util.logging.Logger logger) {
    logger.setLevel(Level.SEVERE);
    return logger;
  }

  Browser() {
    String chromium = System.getProperty("pgbus.it.chromium", "/usr/bin/chromium");
    String chromedriver = System.getProperty("pgbus.it.chromedriver", "/usr/bin/chromedriver");
    if (!Files.isExecutable(Paths.get(chromium)) || !Files.isExecutable(Paths.get(chromedriver))) {
      throw new IllegalStateException(
          "the console's browser test needs "
              + chromium
              + " and "
              + chromedriver
              + ": apt-get install -y chromium chromium-driver (./run-tests does), or point"
              + " -Dpgbus.it.chromium and -Dpgbus.it.chromedriver at them");
    }
    ChromeOptions options = new ChromeOptions();
    options.setBinary(chromium);
    LoggingPreferences logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability("goog:loggingPrefs", logs);
    options.addArguments(
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000");
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(new java.io.File(chromedriver))
            .build();
    driver = new ChromeDriver(service, options);
  }

  WebDriver driver() {
    return driver;
  }

  void open(String url) {
    driver.get(url);
  }

  /** Waits up to {@code seconds} until {@code condition} answers a value that is not null/false. */
  <T> T await(int seconds, Function<WebDriver, T> condition) {
    try {
      return new WebDriverWait(driver, Duration.ofSeconds(seconds))
          .pollingEvery(Duration.ofMillis(100))
          // A page that renders again between a find and a read: the next poll finds it anew.
          .ignoring(org.openqa.selenium.StaleElementReferenceException.class)
          .until(condition);
    } catch (TimeoutException e) {
      throw new AssertionError(
          "timed out on "
              + driver.getCurrentUrl()
              + "; the page's log:\n"
              + log()
              + "\nthe page:\n"
              + driver.getPageSource(),
          e);
    }
  }

  /** What the page wrote to its console, and its failed requests. */
  String log() {
    StringBuilder b = new StringBuilder();
    for (LogEntry e : driver.manage().logs().get(LogType.BROWSER)) {
      b.append(e.getLevel()).append(' ').append(e.getMessage()).append('\n');
    }
    return b.toString();
  }

  WebElement find(String css) {
    return await(20, d -> d.findElement(By.cssSelector(css)));
  }

  /**
   * Clicks the element, found afresh each try: a page that re-renders between the find and the
   * click (the console refreshes its tables) makes the element stale, and the click is retried.
   */
  void click(String css) {
    await(
        20,
        d -> {
          try {
            d.findElement(By.cssSelector(css)).click();
            return true;
          } catch (org.openqa.selenium.StaleElementReferenceException e) {
            return false;
          }
        });
  }

  int count(String css) {
    return driver.findElements(By.cssSelector(css)).size();
  }

  Object script(String js, Object... args) {
    return ((JavascriptExecutor) driver).executeScript(js, args);
  }

  Object asyncScript(String js, Object... args) {
    return ((JavascriptExecutor) driver).executeAsyncScript(js, args);
  }

  void screenshot(String name) {
    try {
      Files.createDirectories(SCREENSHOTS);
      Path shot = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE).toPath();
      Files.copy(shot, SCREENSHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    driver.quit();
  }
}
