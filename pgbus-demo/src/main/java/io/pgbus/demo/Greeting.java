package io.pgbus.demo;

/** The payload of a greetings job, mapped to and from JSON by JSON-B. */
public class Greeting {
  public String name;

  public Greeting() {}

  public Greeting(String name) {
    this.name = name;
  }
}
