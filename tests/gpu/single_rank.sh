# tests/gpu/single_rank.sh — provides: single_rank_checks, the checks of tests/gpu/run.sh with one
# rank per GPU: mpi_tests' NCCL and replay test cases, NCCL, MPI, bf16, CUDA graphs and DP runs by
# exit code, accuracy and log (log_checks.sh), checkpoints and a resume, and agreements between
# runs. Sourced by run.sh, which has set NGPU, DATA_DIR, BIN, TESTS_BIN, MPIRUN and LOG_DIR.
# shellcheck shell=bash

# agree NAME RUN_A RUN_B: a row that passes when the two runs' test accuracies are within 0.02.
agree() {
  local name=$1 acc_a=${ACC_OF[$2]:--} acc_b=${ACC_OF[$3]:--} agreement
  [[ $acc_a != - && $acc_b != - ]] || return 0
  agreement=$(py -c 'import sys
d = abs(float(sys.argv[1]) - float(sys.argv[2]))
print("PASS" if d <= 0.02 else "FAIL: test accuracy differs by %.4f (> 0.02)" % d)' \
    "$acc_a" "$acc_b")
  printf '# %-26s %-8s %s\n' "$name" "$NGPU/$NGPU" "$agreement"
  add_row "$name" "$NGPU/$NGPU" - "$acc_a vs $acc_b" - "$agreement"
}

single_rank_checks() {
  # Every training run sees the same global batch (64, the 1-rank default) up to 8 ranks, so its
  # accuracy after one epoch does not depend on the GPU count; beyond 8 ranks each takes 8.
  # Measured on Fashion-MNIST on CPUs: linear 82.4% (1 rank, and 8 ranks of batch 8), cnn with
  # --momentum 0.9 86.5% (2 ranks of batch 32; 77.4% without momentum). An untrained or garbage
  # network stays near 10%.
  PER_RANK_BATCH=$((64 / NGPU))
  ((PER_RANK_BATCH >= 8)) || PER_RANK_BATCH=8
  FLOOR_LINEAR=0.75
  FLOOR_CNN=0.80
  FLOOR_CNN_BF16=0.78
  COMMON=(--epochs 1 --data-dir "$DATA_DIR" --progress lines --log-every 200 --comm-timeout 60)

  MPI=("$MPIRUN" --bind-to none)
  # The runs that capture: an error in a capture then names the C++ frames it came through.
  GRAPHED=(env TORCH_SHOW_CPP_STACKTRACES=1 "${MPI[@]}")
  check graph_replay_tests 1/1 - 0 replay_cases_ran -- "${GRAPHED[@]}" -np 1 "$TESTS_BIN" \
    --gpu '--test-case=*replay*'
  graph=(-np 1 "$BIN" --backend nccl --model mlp --optimizer adam --lr 0.002 --lr-schedule onecycle
    --device cuda --batch-size 64 "${COMMON[@]}" --max-steps 200)
  check graph_equality_eager 1/1 - 0 - -- "${MPI[@]}" "${graph[@]}" --cuda-graph off \
    --export-model "$LOG_DIR/graph_equality_eager.pt"
  check graph_equality 1/1 - 0 same_parameters_as_eager -- "${GRAPHED[@]}" "${graph[@]}" \
    --cuda-graph on --export-model "$LOG_DIR/graph_equality.pt"
  check nccl_tests "$NGPU/$NGPU" - 0 nccl_cases_ran -- \
    "${MPI[@]}" -np "$NGPU" "$TESTS_BIN" --gpu '--test-case=*nccl*'
  ranks=$((NGPU + 1))
  check nccl_tests_more_ranks "$ranks/$NGPU" - 0 more_ranks_refused -- \
    "${MPI[@]}" -np "$ranks" --oversubscribe "$TESTS_BIN" --gpu '--test-case=*nccl*'

  ddp=(--device cuda --batch-size "$PER_RANK_BATCH" "${COMMON[@]}")
  check ddp_nccl_cnn "$NGPU/$NGPU" "$FLOOR_CNN" 0 - -- "${MPI[@]}" -np "$NGPU" "$BIN" \
    --backend nccl --model cnn --momentum 0.9 "${ddp[@]}" --cuda-graph off \
    --metrics-file "$LOG_DIR/ddp_nccl_cnn.jsonl"
  check ddp_nccl_cnn_graph "$NGPU/$NGPU" "$FLOOR_CNN" 0 graph_on_device_rates -- "${GRAPHED[@]}" \
    -np "$NGPU" "$BIN" --backend nccl --model cnn --momentum 0.9 "${ddp[@]}" --cuda-graph on \
    --metrics-file "$LOG_DIR/ddp_nccl_cnn_graph.jsonl"
  check ddp_nccl_linear "$NGPU/$NGPU" "$FLOOR_LINEAR" 0 - -- "${MPI[@]}" -np "$NGPU" "$BIN" \
    --backend nccl --model linear "${ddp[@]}" --cuda-graph off \
    --metrics-file "$LOG_DIR/ddp_nccl_linear.jsonl"
  check ddp_nccl_linear_graph "$NGPU/$NGPU" "$FLOOR_LINEAR" 0 graph_on -- "${GRAPHED[@]}" \
    -np "$NGPU" \
    "$BIN" --backend nccl --model linear "${ddp[@]}" --cuda-graph on \
    --metrics-file "$LOG_DIR/ddp_nccl_linear_graph.jsonl"
  check ddp_nccl_cnn_bf16 "$NGPU/$NGPU" "$FLOOR_CNN_BF16" 0 - -- "${MPI[@]}" -np "$NGPU" "$BIN" \
    --backend nccl --model cnn --momentum 0.9 --precision bf16 "${ddp[@]}" \
    --metrics-file "$LOG_DIR/ddp_nccl_cnn_bf16.jsonl"
  check ddp_mpi_cnn "$NGPU/$NGPU" "$FLOOR_CNN" 0 - -- "${MPI[@]}" -np "$NGPU" "$BIN" \
    --backend mpi --model cnn --momentum 0.9 "${ddp[@]}" \
    --metrics-file "$LOG_DIR/ddp_mpi_cnn.jsonl"
  check dp_cnn "1/$NGPU" "$FLOOR_CNN" 0 dp_eager -- "${MPI[@]}" -np 1 "$BIN" --mode dp --model cnn \
    --momentum 0.9 --device cuda --batch-size 64 "${COMMON[@]}" --metrics-file "$LOG_DIR/dp_cnn.jsonl"
  # Two ranks per GPU over MPI: the gradient buckets are staged through host memory from LibTorch's
  # autograd thread. Global batch 64 up to 4 GPUs, 16 x NGPU beyond (8 per rank).
  ranks=$((2 * NGPU))
  check ddp_mpi_cnn_2_per_gpu "$ranks/$NGPU" "$FLOOR_CNN" 0 - -- "${MPI[@]}" -np "$ranks" \
    --oversubscribe "$BIN" --backend mpi --model cnn --momentum 0.9 --device cuda \
    --batch-size $((64 / ranks > 8 ? 64 / ranks : 8)) "${COMMON[@]}" \
    --metrics-file "$LOG_DIR/ddp_mpi_cnn_2_per_gpu.jsonl"

  # One rank that communicates as each of N does (--communicate-alone): NCCL's bucket allreduces
  # handed over to the watchdog, the parameter broadcast and the timeline's collectives all run on
  # one GPU, and the result is the plain 1-rank run's. The mlp, in two buckets: cuBLAS gives the
  # same bits run to run, so any difference is the communication's; cuDNN's convolutions do not
  # (three cnn runs on an H200 ended 300 steps at test losses 0.1175, 0.1158 and 0.1134).
  alone=(-np 1 "$BIN" --backend nccl --model mlp --momentum 0.9 --bucket-mb 0.25 --device cuda
    --batch-size 64 "${COMMON[@]}" --max-steps 300)
  check nccl_alone_plain 1/1 - 0 - -- "${MPI[@]}" "${alone[@]}" \
    --metrics-file "$LOG_DIR/nccl_alone_plain.jsonl"
  check nccl_alone 1/1 - 0 communicated_alone -- "${MPI[@]}" "${alone[@]}" --communicate-alone \
    --cuda-graph off --timeline "$LOG_DIR/nccl_alone_timeline.json" \
    --metrics-file "$LOG_DIR/nccl_alone.jsonl"
  # The same with every step's bucket allreduces captured and replayed, the watchdog watching each
  # replay.
  check nccl_alone_graph 1/1 - 0 communicated_alone_graphed -- "${GRAPHED[@]}" "${alone[@]}" \
    --communicate-alone --cuda-graph on --metrics-file "$LOG_DIR/nccl_alone_graph.jsonl"
  # Checkpoints of a GPU run with the default --cuda-graph auto (graphed): stop at step 400
  # (checkpoints at 200 and 400), resume to the end of the epoch, export the model (moved to the
  # CPU).
  rm -rf "$LOG_DIR/checkpoints"
  check checkpoint_400_steps "$NGPU/$NGPU" - 0 graph_on -- "${MPI[@]}" -np "$NGPU" "$BIN" \
    --model linear "${ddp[@]}" --max-steps 400 --checkpoint-every 200 \
    --checkpoint-dir "$LOG_DIR/checkpoints"
  check resume_to_epoch_end "$NGPU/$NGPU" "$FLOOR_LINEAR" 0 resumed_at_400 -- "${MPI[@]}" \
    -np "$NGPU" "$BIN" --model linear "${ddp[@]}" --checkpoint-dir "$LOG_DIR/checkpoints" \
    --resume auto --export-model "$LOG_DIR/model.pt" \
    --metrics-file "$LOG_DIR/resume_to_epoch_end.jsonl"

  # Throughput at a batch that keeps a GPU busier (512 per GPU, 117 steps per epoch for 1 GPU):
  # DDP and DP side by side; the floor only says that it still learns.
  check ddp_nccl_cnn_b512 "$NGPU/$NGPU" 0.60 0 - -- "${MPI[@]}" -np "$NGPU" "$BIN" \
    --backend nccl --model cnn --momentum 0.9 --device cuda --batch-size 512 "${COMMON[@]}" \
    --metrics-file "$LOG_DIR/ddp_nccl_cnn_b512.jsonl"
  check dp_cnn_b512 "1/$NGPU" 0.60 0 - -- "${MPI[@]}" -np 1 "$BIN" --mode dp --model cnn \
    --momentum 0.9 --device cuda --batch-size $((512 * NGPU)) "${COMMON[@]}" \
    --metrics-file "$LOG_DIR/dp_cnn_b512.jsonl"
  check dp_under_2_ranks_refused "2/$NGPU" - 2 refused_for_mode -- \
    "${MPI[@]}" -np 2 --oversubscribe "$BIN" --mode dp --model linear --device cuda "${COMMON[@]}"

  # The same training through NCCL and through MPI must agree: a wrong average in one of them
  # shows here even where both still learn.
  agree nccl_vs_mpi_cnn ddp_nccl_cnn ddp_mpi_cnn
  # Graphed and eager cnn runs learn alike (dropout draws other masks).
  agree graph_vs_eager_cnn ddp_nccl_cnn_graph ddp_nccl_cnn
}
