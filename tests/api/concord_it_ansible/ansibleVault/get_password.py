#!/usr/bin/python3
print("q1");
