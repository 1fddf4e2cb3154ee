package com.ibm.websphere.logging.hpel;

import java.util.HashMap;
import java.util.Map;

/**
 * A test stand-in with the public API of Open Liberty's LogRecordContext (the fixed-value part:
 * addExtension, removeExtension, getExtensions), so that JobLogFieldsTest can check the adapter
 * without a Liberty server. Liberty's JSON logging writes each entry as an {@code ext_} field.
 */
public final class LogRecordContext {

  private static final ThreadLocal<Map<String, String>> EXTENSIONS =
      ThreadLocal.withInitial(HashMap::new);

  private LogRecordContext() {}

  public static void addExtension(String name, String value) {
    if (name == null || value == null) {
      throw new IllegalArgumentException(
          "Neither 'extensionName' nor 'extensionValue' can be null");
    }
    EXTENSIONS.get().put(name, value);
  }

  public static boolean removeExtension(String name) {
    return EXTENSIONS.get().remove(name) != null;
  }

  public static void getExtensions(Map<String, String> map) {
    map.putAll(EXTENSIONS.get());
  }
}
