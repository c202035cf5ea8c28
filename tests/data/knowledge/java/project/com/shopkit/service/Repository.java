package com.shopkit.service;

import java.util.List;

public interface Repository<T> {
  T find(String id);

  void save(String id, T item);

  List<T> all();
}
