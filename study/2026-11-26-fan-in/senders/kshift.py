"""GOAL of one round in which every rank i of P sends m bytes to each of i-1, ..., i-k
(mod P) and receives from i+1, ..., i+k, all posted at once: k senders into every node
(k = P - 1 is the all-to-all round of measure efficiency).

Usage: python3 kshift.py P K M > round.goal"""

import sys

P, K, M = (int(x) for x in sys.argv[1:4])
print(f"num_ranks {P}")
for i in range(P):
    print(f"rank {i} {{")
    for j in range(1, K + 1):
        print(f"r{j}: recv {M}b from {(i + j) % P} tag {j}")
    for j in range(1, K + 1):
        print(f"s{j}: send {M}b to {(i - j) % P} tag {j}")
    print("}")
