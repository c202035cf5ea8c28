package com.shopkit.cart;

import com.shopkit.model.Money;
import com.shopkit.model.Product;

public class CartItem {
  private final Product product;
  private int quantity;

  public CartItem(Product product, int quantity) {
    this.product = product;
    this.quantity = quantity;
  }

  public Product getProduct() {
    return product;
  }

  public int getQuantity() {
    return quantity;
  }

  public void add(int more) {
    quantity = quantity + more;
  }

  public Money lineTotal() {
    return product.getPrice().times(quantity);
  }
}
