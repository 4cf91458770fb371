#!/bin/bash
# sample h0's TCP connections (ss -tin) every 20 ms while $PID runs: cwnd of each data connection
NS=$1; PID=$2; OUT=$3
: > $OUT
while kill -0 $PID 2>/dev/null; do
  echo "T $(date +%s.%N)" >> $OUT
  ip netns exec $NS ss -tin state established 2>/dev/null >> $OUT
  sleep 0.02
done
