"""Chat answers to MultiPL-E's HumanEval_53_add ("add two numbers") in each language, as chat
models write them: the whole function with a helper, includes and a `main` or demo call; only
the body; a draft then a fix; another language's block first. Every one of them is correct, so
each program built from them must pass the task's tests (tests/stages/benchmarks/test_multiple.py
runs
them in the sandbox); WRONG_FULL's must fail."""

from __future__ import annotations

FULL = {
    "js": (
        "Here is the implementation:\n\n```javascript\n/**\n * Adds two numbers.\n */\n"
        "function helper(a) {\n  return a; // } in a comment\n}\n\nfunction add(x, y) {\n"
        "  const label = `sum: ${x + y} }`;\n  return helper(x) + y;\n}\n\n"
        "console.log(add(2, 3)); // 5\nmodule.exports = { add };\n```\n\n"
        "The function returns the sum of `x` and `y`."
    ),
    "cpp": (
        "```cpp\n#include <bits/stdc++.h>\nusing namespace std;\n\n"
        "static long helper(long a) {\n    return a;\n}\n\n"
        "long add(long x, long y) {\n    std::string s = \"}\"; char c = '}';\n"
        "    return helper(x) + y;\n}\n\nint main() {\n    cout << add(2, 3) << endl;\n"
        "    return 0;\n}\n```\n\nThis compiles with `g++ -std=c++17`."
    ),
    "java": (
        "Sure! Here's the Java code:\n\n```java\nimport java.util.*;\n\n"
        "public class Solution {\n    private long helper(long a) {\n        return a;\n    }\n\n"
        '    public long add(long x, long y) {\n        String s = "}";\n'
        "        return helper(x) + y;\n    }\n\n"
        "    public static void main(String[] args) {\n"
        "        System.out.println(new Solution().add(2, 3));\n    }\n}\n```\n"
    ),
    "rs": (
        "```rust\nuse std::collections::HashMap;\n\n/// Identity.\n"
        "fn helper<'a>(a: &'a isize) -> isize {\n    *a\n}\n\n"
        "fn add(x: isize, y: isize) -> isize {\n    let _brace = '}';\n"
        "    let _unused: HashMap<isize, isize> = HashMap::new();\n    helper(&x) + y\n}\n\n"
        'fn main() {\n    println!("{}", add(2, 3));\n}\n```\n'
    ),
    "lua": (
        "```lua\nlocal function helper(a)\n  return a\nend\n\n"
        'local function add(x, y)\n  if x == nil then\n    error("x is nil")\n  end\n'
        '  local words = "end"\n  for _ = 1, 1 do end\n  return helper(x) + y\nend\n\n'
        "print(add(2, 3))\nreturn add\n```\n"
    ),
    # a package clause, an import the prompt lacks (and one only main uses), a raw string
    "go": (
        'Here you go:\n\n```go\npackage main\n\nimport (\n\t"fmt"\n\t"strings"\n)\n\n'
        "// helper returns its argument.\nfunc helper(a int) int {\n\treturn a\n}\n\n"
        "func add(x int, y int) int {\n\ts := `}`\n\t_ = strings.TrimSpace(s)\n"
        "\treturn helper(x) + y\n}\n\nfunc main() {\n\tfmt.Println(add(2, 3))\n}\n```\n"
    ),
    "ts": (
        "```typescript\ntype Num = number;\n\nfunction helper<T>(a: T): T {\n  return a;\n}\n\n"
        "function add(x: Num, y: number): number {\n  const label: string = `sum: ${x + y} }`;\n"
        "  return helper(x) + y;\n}\n\nconsole.log(add(2, 3));\nexport { add };\n```\n"
    ),
}

BODY = {
    "js": "Complete the function like this:\n\n```js\n  return x + y;\n}\n```\n",
    "cpp": "The body is a single line:\n\n```c++\n    return x + y;\n}\n```\n",
    "java": "```java\n        return x + y;\n```\n",
    "rs": "```rs\n    x + y\n```\n",
    "lua": "```lua\n    return x + y\n```\n",
    "go": "```go\n    return x + y\n}\n```\n",
    "ts": "```ts\n  return x + y;\n}\n```\n",
}

# a Python draft first (another language: ignored), then a wrong draft, then the fix
SEVERAL = {
    "js": (
        "In Python this would be:\n```python\ndef add(x, y):\n    return x + y\n```\n"
        "First try:\n```javascript\nfunction add(x, y) {\n  return x - y;\n}\n```\n"
        "Oops, fixed:\n```javascript\nfunction add(x, y) {\n  return x + y;\n}\n```\n"
    ),
    "cpp": (
        "```python\ndef add(x, y):\n    return x + y\n```\n"
        "```cpp\nlong add(long x, long y) {\n    return x - y;\n}\n```\nCorrected:\n"
        "```cpp\nlong add(long x, long y) {\n    return x + y;\n}\n```\n"
    ),
    "java": (
        "```python\ndef add(x, y):\n    return x + y\n```\n"
        "```java\nclass Problem {\n    public static long add(long x, long y) {\n"
        "        return x - y;\n    }\n}\n```\nCorrected:\n"
        "```java\nclass Problem {\n    public static long add(long x, long y) {\n"
        "        return x + y;\n    }\n}\n```\n"
    ),
    "rs": (
        "```python\ndef add(x, y):\n    return x + y\n```\n"
        "```rust\nfn add(x: isize, y: isize) -> isize {\n    x - y\n}\n```\nCorrected:\n"
        "```rust\nfn add(x: isize, y: isize) -> isize {\n    x + y\n}\n```\n"
    ),
    "lua": (
        "```python\ndef add(x, y):\n    return x + y\n```\n"
        "```lua\nfunction add(x, y)\n  return x - y\nend\n```\nCorrected:\n"
        "```lua\nfunction add(x, y)\n  return x + y\nend\n```\n"
    ),
    "go": (
        "```python\ndef add(x, y):\n    return x + y\n```\n"
        "```go\nfunc add(x int, y int) int {\n\treturn x - y\n}\n```\nCorrected:\n"
        "```go\nfunc add(x int, y int) int {\n\treturn x + y\n}\n```\n"
    ),
    "ts": (
        "```python\ndef add(x, y):\n    return x + y\n```\n"
        "```typescript\nfunction add(x: number, y: number): number {\n  return x - y;\n}\n```\n"
        "Corrected:\n```typescript\nfunction add(x: number, y: number): number {\n"
        "  return x + y;\n}\n```\n"
    ),
}

# no fence at all: prose, then the code
UNFENCED = {
    "js": "Here is the function.\nfunction add(x, y) {\n  return x + y;\n}\n",
    "cpp": "Solution:\n#include <vector>\nlong add(long x, long y) {\n    return x + y;\n}\n",
    "java": "Solution:\npublic static long add(long x, long y) {\n    return x + y;\n}\n",
    "rs": "Solution:\nfn add(x: isize, y: isize) -> isize {\n    x + y\n}\n",
    "lua": "Solution:\nlocal function add(x, y)\n  return x + y\nend\n",
    "go": "Solution:\nfunc add(x int, y int) int {\n\treturn x + y\n}\n",
    "ts": "Solution:\nfunction add(x: number, y: number): number {\n  return x + y;\n}\n",
}

WRONG_FULL = {
    key: answer.replace("(x) + y", "(x) - y").replace("(&x) + y", "(&x) - y")
    for key, answer in FULL.items()
}
assert all(WRONG_FULL[key] != FULL[key] for key in FULL)
