function doSomething(i) {
  return i * 2;
}

execution.setVariable("result", doSomething(2));
