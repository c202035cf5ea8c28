package com.shopkit.util;

public final class Ids {
  private static int counter;

  private Ids() {}

  public static String next(String prefix) {
    counter = counter + 1;
    return prefix + "-" + counter;
  }

  public static int issued() {
    return counter;
  }
}
