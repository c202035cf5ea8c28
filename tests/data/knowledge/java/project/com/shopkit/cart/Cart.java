package com.shopkit.cart;

import com.shopkit.model.Money;
import com.shopkit.model.Product;
import java.util.ArrayList;
import java.util.List;

public class Cart {
  private final List<CartItem> items = new ArrayList<>();

  public void add(Product product) {
    add(product, 1);
  }

  public void add(Product product, int quantity) {
    for (CartItem item : items) {
      if (item.getProduct().getSku().equals(product.getSku())) {
        item.add(quantity);
        return;
      }
    }
    items.add(new CartItem(product, quantity));
  }

  public boolean remove(String sku) {
    return items.removeIf(item -> item.getProduct().getSku().equals(sku));
  }

  public Money subtotal() {
    Money sum = Money.ZERO;
    for (CartItem item : items) {
      sum = sum.plus(item.lineTotal());
    }
    return sum;
  }

  public Money total(Discount discount) {
    Money subtotal = subtotal();
    return discount == null ? subtotal : discount.apply(subtotal);
  }

  public List<CartItem> items() {
    return items;
  }

  public int size() {
    return items.size();
  }
}
