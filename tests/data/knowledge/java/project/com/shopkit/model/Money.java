package com.shopkit.model;

/** Money in cents. The words plus, times and cents in this comment are not references. */
public final class Money {
  public static final Money ZERO = new Money(0);
  private final long cents;

  public Money(long cents) {
    this.cents = cents;
  }

  public Money(long units, int cents) {
    this(units * 100 + cents);
  }

  public static Money of(long cents) {
    return new Money(cents);
  }

  public long cents() {
    return cents;
  }

  public Money plus(Money other) {
    return new Money(cents + other.cents);
  }

  public Money times(int factor) {
    return new Money(cents * factor);
  }

  public Money times(int numerator, int denominator) {
    return new Money(cents * numerator / denominator);
  }

  public boolean isZero() {
    return cents == 0;
  }

  @Override
  public String toString() {
    return "Money(" + cents + ") plus times";
  }
}
