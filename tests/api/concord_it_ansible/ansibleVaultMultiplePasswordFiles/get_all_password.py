#!/usr/bin/python3
print("q2")
