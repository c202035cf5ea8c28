package com.shopkit.promo;

import com.shopkit.cart.Discount;
import com.shopkit.cart.PercentDiscount;
import com.shopkit.model.Money;

public class SpringPromotion implements Discount {
  private final PercentDiscount inner = new PercentDiscount(5);

  @Override
  public Money apply(Money subtotal) {
    return eligible(subtotal) ? inner.apply(subtotal) : subtotal;
  }

  private boolean eligible(Money subtotal) {
    return subtotal.cents() > 1000;
  }

  @Override
  public String describe() {
    return "Spring: " + inner.describe();
  }
}
