package com.shopkit.cart;

import com.shopkit.model.Money;

public class FixedDiscount implements Discount {
  private final Money amount;

  public FixedDiscount(Money amount) {
    this.amount = amount;
  }

  @Override
  public Money apply(Money subtotal) {
    if (subtotal.cents() < amount.cents()) {
      return Money.ZERO;
    }
    return Money.of(subtotal.cents() - amount.cents());
  }

  @Override
  public String describe() {
    return amount + " off";
  }
}
