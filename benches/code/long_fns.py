# Usage (from the repository root): python3 benches/code/long_fns.py [LIMIT]
# Non-test functions in src/ longer than LIMIT lines (default 80), longest
# first: from a `fn` line to the closing brace at its own indentation. Test
# modules (`#[cfg(test)] mod tests`) and src/**/tests.rs are left out.
import glob, re, sys

limit = int(sys.argv[1]) if len(sys.argv) > 1 else 80
found = []
for path in sorted(glob.glob('src/**/*.rs', recursive=True)):
    if path.endswith('/tests.rs') or '/testkit.rs' in path:
        continue
    lines = open(path).read().split('\n')
    end = len(lines)
    for i, l in enumerate(lines):
        if l.strip() == '#[cfg(test)]' and i + 1 < len(lines) and re.match(r'\s*mod \w+', lines[i + 1]):
            end = i
            break
    for i in range(end):
        m = re.match(r'^(\s*)(pub(\([a-z]+\))? )?(async )?(unsafe )?fn (\w+)', lines[i])
        if not m:
            continue
        indent = len(m.group(1))
        j = i
        while j < end and not lines[j].rstrip().endswith('{'):
            if lines[j].rstrip().endswith(';'):
                break
            j += 1
        if j >= end or not lines[j].rstrip().endswith('{'):
            continue
        k = j + 1
        while k < len(lines) and lines[k].rstrip() != ' ' * indent + '}':
            k += 1
        if k - i + 1 > limit:
            found.append((k - i + 1, path, m.group(6)))
for n, path, name in sorted(found, reverse=True):
    print(f'{n:5} {path} {name}')
print(f'{len(found)} functions over {limit} lines')
