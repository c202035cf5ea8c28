package com.shopkit.model;

public class Product {
  private final String sku;
  private final String name;
  private final Money price;
  private final Category category;

  public Product(String sku, String name, Money price, Category category) {
    this.sku = sku;
    this.name = name;
    this.price = price;
    this.category = category;
  }

  public String getSku() {
    return sku;
  }

  public String getName() {
    return name;
  }

  public Money getPrice() {
    return price;
  }

  public Category getCategory() {
    return category;
  }

  public Product withPrice(Money price) {
    return new Product(sku, name, price, category);
  }

  public boolean isTaxFree() {
    return category == Category.BOOKS;
  }
}
