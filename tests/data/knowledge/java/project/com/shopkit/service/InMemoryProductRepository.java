package com.shopkit.service;

import com.shopkit.model.Product;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class InMemoryProductRepository implements Repository<Product> {
  private final Map<String, Product> products = new HashMap<>();

  @Override
  public Product find(String id) {
    return products.get(id);
  }

  @Override
  public void save(String id, Product item) {
    products.put(id, item);
  }

  @Override
  public List<Product> all() {
    return new ArrayList<>(products.values());
  }
}
