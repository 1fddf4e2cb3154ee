package io.pgbus.it;

/** A test payload: a unique text that handlers record, and whether the handler should fail. */
public class Marker {
  public String text;
  public boolean fail;

  public Marker() {}

  public Marker(String text, boolean fail) {
    this.text = text;
    this.fail = fail;
  }
}
