package com.shopkit.model;

public record Customer(String id, String name, boolean premium) {
  public String display() {
    return name + " (" + id + ")";
  }

  public static Customer guest() {
    return new Customer("guest", "Guest", false);
  }
}
