package com.shopkit.promo;

import com.shopkit.cart.Discount;
import com.shopkit.cart.PercentDiscount;
import com.shopkit.model.Money;

public class MemberPromotion implements Discount {
  private final PercentDiscount inner = new PercentDiscount(8);

  @Override
  public Money apply(Money subtotal) {
    return eligible(subtotal) ? inner.apply(subtotal) : subtotal;
  }

  private boolean eligible(Money subtotal) {
    return subtotal.cents() > 4000;
  }

  @Override
  public String describe() {
    return "Member: " + inner.describe();
  }
}
