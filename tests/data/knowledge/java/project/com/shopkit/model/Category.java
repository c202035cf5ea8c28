package com.shopkit.model;

public enum Category {
  FOOD("food", 5),
  BOOKS("books", 0),
  TOYS("toys", 20),
  OTHER;

  private final String label;
  private final int taxPercent;

  Category(String label, int taxPercent) {
    this.label = label;
    this.taxPercent = taxPercent;
  }

  Category() {
    this("other", 10);
  }

  public String label() {
    return label;
  }

  public int taxPercent() {
    return taxPercent;
  }
}
