package com.shopkit.app;

import com.shopkit.cart.Cart;
import com.shopkit.cart.CartItem;
import com.shopkit.cart.Discount;
import com.shopkit.model.Money;
import com.shopkit.model.Product;
import com.shopkit.service.PricingService;
import com.shopkit.util.Ids;
import com.shopkit.util.Strings;
import java.util.List;
import java.util.stream.Collectors;

public class Report {
  private final Cart cart;
  private int total;

  public Report(Cart cart) {
    this.cart = cart;
  }

  public List<String> names() {
    return cart.items().stream().map(CartItem::getProduct).map(Product::getName).collect(Collectors.toList());
  }

  public String render() {
    var builder = new StringBuilder();
    var subtotal = cart.subtotal();
    int total = 0;
    for (CartItem item : cart.items()) {
      total = total + item.getQuantity();
      builder.append(Strings.padLeft(item.getProduct().getName(), 20));
      builder.append(item.lineTotal());
      builder.append(PricingService.taxFor(item.getProduct()));
    }
    this.total = total;
    Discount none = new Discount() {
      @Override
      public Money apply(Money amount) {
        return amount;
      }

      @Override
      public String describe() {
        return "none";
      }
    };
    builder.append(none.apply(subtotal)).append(none.describe());
    builder.append(Ids.issued());
    return builder.toString();
  }

  public int total() {
    return total;
  }
}
