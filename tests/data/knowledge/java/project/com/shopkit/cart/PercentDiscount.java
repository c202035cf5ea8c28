package com.shopkit.cart;

import com.shopkit.model.Money;

public class PercentDiscount implements Discount {
  private final int percent;

  public PercentDiscount(int percent) {
    this.percent = percent;
  }

  @Override
  public Money apply(Money subtotal) {
    return subtotal.times(100 - percent, 100);
  }

  @Override
  public String describe() {
    return percent + "% off";
  }
}
