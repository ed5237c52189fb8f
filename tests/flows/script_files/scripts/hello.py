x = 2 * 3
execution.setVariable("fromPython", x)
