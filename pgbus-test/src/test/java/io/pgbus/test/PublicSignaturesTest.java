package io.pgbus.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Executable;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The kit's users compile against pgbus-api: what the kit shows them (public types, their public
 * constructors, methods and fields) names only pgbus-api, the kit and the JDK, never the engine or
 * the Jakarta adapter.
 */
class PublicSignaturesTest {

  @Test
  void theKitsPublicSignaturesNameOnlyPgbusApiTheKitAndTheJdk() throws Exception {
    var offending = new ArrayList<String>();
    List<Class<?>> types = kitTypes();
    assertThat(types).contains(TestWorker.class, TestWorker.Builder.class, PgbusTestKit.class);
    for (Class<?> type : types) {
      if (!Modifier.isPublic(type.getModifiers())) {
        continue;
      }
      var members = new ArrayList<Executable>(List.of(type.getDeclaredConstructors()));
      members.addAll(List.of(type.getDeclaredMethods()));
      for (Executable m : members) {
        if (!Modifier.isPublic(m.getModifiers()) || m.isSynthetic()) {
          continue;
        }
        var named = new ArrayList<Type>(List.of(m.getGenericParameterTypes()));
        named.addAll(List.of(m.getGenericExceptionTypes()));
        if (m instanceof Method method) {
          named.add(method.getGenericReturnType());
        }
        for (Type t : named) {
          for (Class<?> c : classesIn(t)) {
            if (!allowed(c)) {
              offending.add(type.getSimpleName() + "." + m.getName() + " names " + c.getName());
            }
          }
        }
      }
      for (var f : type.getDeclaredFields()) {
        if (Modifier.isPublic(f.getModifiers()) && !allowed(f.getType())) {
          offending.add(type.getSimpleName() + "." + f.getName() + " is a " + f.getType());
        }
      }
    }
    assertThat(offending).isEmpty();
  }

  private static boolean allowed(Class<?> c) {
    while (c.isArray()) {
      c = c.getComponentType();
    }
    String pkg = c.getPackageName();
    return c.isPrimitive()
        || pkg.startsWith("java.")
        || pkg.equals("javax.sql")
        || pkg.equals("io.pgbus")
        || pkg.equals("io.pgbus.test");
  }

  private static List<Class<?>> classesIn(Type t) {
    var out = new ArrayList<Class<?>>();
    if (t instanceof Class<?> c) {
      out.add(c);
    } else if (t instanceof ParameterizedType p) {
      out.addAll(classesIn(p.getRawType()));
      for (Type a : p.getActualTypeArguments()) {
        out.addAll(classesIn(a));
      }
    } else if (t instanceof GenericArrayType g) {
      out.addAll(classesIn(g.getGenericComponentType()));
    } else if (t instanceof WildcardType w) {
      for (Type b : w.getUpperBounds()) {
        out.addAll(classesIn(b));
      }
      for (Type b : w.getLowerBounds()) {
        out.addAll(classesIn(b));
      }
    }
    return out;
  }

  private static List<Class<?>> kitTypes() throws URISyntaxException, Exception {
    Path root =
        Path.of(PgbusTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path dir = root.resolve("io/pgbus/test");
    var out = new ArrayList<Class<?>>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".class")).toList()) {
        String simple = f.getFileName().toString().replace(".class", "");
        out.add(Class.forName("io.pgbus.test." + simple.replace('/', '.')));
      }
    }
    return out;
  }
}
