package com.shopkit.util;

public final class Strings {
  private Strings() {}

  public static String padLeft(String text, int width) {
    StringBuilder out = new StringBuilder();
    for (int i = text.length(); i < width; i++) {
      out.append(' ');
    }
    return out.append(text).toString();
  }

  public static boolean isBlank(String text) {
    return text == null || text.trim().isEmpty();
  }
}
