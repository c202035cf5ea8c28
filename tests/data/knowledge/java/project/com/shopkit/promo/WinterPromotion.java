package com.shopkit.promo;

import com.shopkit.cart.Discount;
import com.shopkit.cart.PercentDiscount;
import com.shopkit.model.Money;

public class WinterPromotion implements Discount {
  private final PercentDiscount inner = new PercentDiscount(25);

  @Override
  public Money apply(Money subtotal) {
    return eligible(subtotal) ? inner.apply(subtotal) : subtotal;
  }

  private boolean eligible(Money subtotal) {
    return subtotal.cents() > 3000;
  }

  @Override
  public String describe() {
    return "Winter: " + inner.describe();
  }
}
