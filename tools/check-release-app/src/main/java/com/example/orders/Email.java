package com.example.orders;

/** A payload, mapped by JSON-B. */
public record Email(String address) {}
