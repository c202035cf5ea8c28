package com.shopkit.service;

import com.shopkit.cart.Cart;
import com.shopkit.cart.CartItem;
import com.shopkit.cart.Discount;
import com.shopkit.cart.PercentDiscount;
import com.shopkit.model.Customer;
import com.shopkit.model.Money;
import com.shopkit.model.Product;

public class PricingService {
  public static Money taxFor(Product product) {
    if (product.isTaxFree()) {
      return Money.ZERO;
    }
    return product.getPrice().times(product.getCategory().taxPercent(), 100);
  }

  public Money price(Cart cart, Customer customer) {
    Discount discount = customer.premium() ? new PercentDiscount(10) : null;
    Money total = cart.total(discount);
    for (CartItem item : cart.items()) {
      total = total.plus(taxFor(item.getProduct()).times(item.getQuantity()));
    }
    return total;
  }
}
