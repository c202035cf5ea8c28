package com.shopkit.service;

import com.shopkit.cart.Cart;
import com.shopkit.cart.CartItem;
import java.util.HashMap;
import java.util.Map;

public class InventoryService {
  private final Map<String, Integer> stock = new HashMap<>();

  public void add(String sku, int quantity) {
    stock.merge(sku, quantity, Integer::sum);
  }

  public int available(String sku) {
    return stock.getOrDefault(sku, 0);
  }

  public boolean reserve(Cart cart) {
    for (CartItem item : cart.items()) {
      if (available(item.getProduct().getSku()) < item.getQuantity()) {
        return false;
      }
    }
    for (CartItem item : cart.items()) {
      add(item.getProduct().getSku(), -item.getQuantity());
    }
    return true;
  }
}
