;; Tic-tac-toe as a game module (ABI v2, docs/GAME_MODULES.md), written to equal the catalogue's
;; `tictactoe` move for move: the same moves in the same order (empty cells ascending), the same
;; values (+1 win, 0 draw, -1 loss for the side to move), the same immediate wins, the same
;; perfect base-3 hash and the same notation (cells 1-9 played in order, row-major from the top
;; left, `519`, or `5,1,9`), so every deterministic kernel counts the same nodes on it.
;;
;; Cell i = row * 3 + col is bit i. Position, 8 bytes:
;;   0..2  X's cells (u16)   2..4  O's cells (u16)   4  plies   5  won by the last move   6..8  0
;; Memory: 64 the eight lines as bit masks; 256 the description; 512 and 528 scratch lists of
;; X's and O's cells; 768.. messages; 1024 a copy of the text being parsed; 4096 the I/O area.

(module
  (memory (export "memory") 1)
  (global $io i32 (i32.const 4096))
  (data (i32.const 64)
    "\07\00\00\00\38\00\00\00\c0\01\00\00\49\00\00\00\92\00\00\00\24\01\00\00\11\01\00\00\54\00\00\00")
  (data (i32.const 256)
    "name=tictactoe\nplayers=2\nzero_sum=1\nchance=0\nmin_value=-1\nmax_value=1\nposition_bytes=8\nmax_moves=9\nmove_bound=9\nmax_plies=9\nhash_is_key=1\nio_bytes=1024\n")
  (data (i32.const 768) "not a cell number")
  (data (i32.const 816) "outside the board (cells 1..9)")
  (data (i32.const 864) "the game is already over")
  (data (i32.const 912) "the cell is already taken")
  (data (i32.const 960) "move ")

  (func (export "gs_abi_version") (result i32)
    (i32.const 2))
  (func (export "gs_io") (result i32)
    (global.get $io))
  (func (export "gs_describe") (result i32)
    (memory.copy (global.get $io) (i32.const 256) (i32.const 152))
    (i32.const 152))

  ;; Whether `mask` holds a complete line.
  (func $wins (param $mask i32) (result i32)
    (local $a i32) (local $l i32)
    (local.set $a (i32.const 64))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $a) (i32.const 96)))
        (local.set $l (i32.load (local.get $a)))
        (if (i32.eq (i32.and (local.get $mask) (local.get $l)) (local.get $l))
          (then (return (i32.const 1))))
        (local.set $a (i32.add (local.get $a) (i32.const 4)))
        (br $next)))
    (i32.const 0))

  (func $x (result i32) (i32.load16_u (global.get $io)))
  (func $o (result i32) (i32.load16_u offset=2 (global.get $io)))
  (func $plies (result i32) (i32.load8_u offset=4 (global.get $io)))
  (func $won (result i32) (i32.load8_u offset=5 (global.get $io)))

  ;; The status word of the position in the I/O area: kind << 8 | side.
  (func $status (result i32)
    (local $side i32)
    (local.set $side (i32.and (call $plies) (i32.const 1)))
    (if (result i32) (i32.or (call $won) (i32.eq (call $plies) (i32.const 9)))
      (then (i32.or (i32.const 512) (local.get $side)))
      (else (local.get $side))))

  (func (export "gs_init") (param $len i32) (result i32)
    (i64.store (global.get $io) (i64.const 0))
    (call $status))

  (func (export "gs_status") (result i32)
    (call $status))

  (func $gs_moves (export "gs_moves") (result i32)
    (local $occ i32) (local $i i32) (local $n i32)
    (local.set $occ (i32.or (call $x) (call $o)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (i32.const 9)))
        (if (i32.eqz (i32.and (i32.shr_u (local.get $occ) (local.get $i)) (i32.const 1)))
          (then
            (i32.store (i32.add (global.get $io) (i32.shl (local.get $n) (i32.const 2)))
              (local.get $i))
            (local.set $n (i32.add (local.get $n) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $n))

  ;; Plays cell `mv` on the position in the I/O area: 0, or 1 outside the board, 3 the game is
  ;; over, 4 the cell is taken (the position unchanged).
  (func $apply (param $mv i32) (result i32)
    (local $at i32) (local $mask i32)
    (if (i32.ge_u (local.get $mv) (i32.const 9)) (then (return (i32.const 1))))
    (if (i32.ge_u (call $status) (i32.const 512)) (then (return (i32.const 3))))
    (if (i32.and (i32.shr_u (i32.or (call $x) (call $o)) (local.get $mv)) (i32.const 1))
      (then (return (i32.const 4))))
    (local.set $at (i32.add (global.get $io)
      (i32.shl (i32.and (call $plies) (i32.const 1)) (i32.const 1))))
    (local.set $mask (i32.or (i32.load16_u (local.get $at)) (i32.shl (i32.const 1) (local.get $mv))))
    (i32.store16 (local.get $at) (local.get $mask))
    (i32.store8 offset=5 (global.get $io) (call $wins (local.get $mask)))
    (i32.store8 offset=4 (global.get $io) (i32.add (call $plies) (i32.const 1)))
    (i32.const 0))

  ;; Writes message `code` (as $apply's, 2 = not a number) at `at`; returns the end.
  (func $message (param $at i32) (param $code i32) (result i32)
    (local $src i32) (local $len i32)
    (local.set $src (i32.const 768)) (local.set $len (i32.const 17))
    (if (i32.eq (local.get $code) (i32.const 1))
      (then (local.set $src (i32.const 816)) (local.set $len (i32.const 30))))
    (if (i32.eq (local.get $code) (i32.const 3))
      (then (local.set $src (i32.const 864)) (local.set $len (i32.const 24))))
    (if (i32.eq (local.get $code) (i32.const 4))
      (then (local.set $src (i32.const 912)) (local.set $len (i32.const 25))))
    (memory.copy (local.get $at) (local.get $src) (local.get $len))
    (i32.add (local.get $at) (local.get $len)))

  (func $gs_play (export "gs_play") (param $mv i32) (result i32)
    (local $e i32)
    (local.set $e (call $apply (local.get $mv)))
    (if (local.get $e)
      (then (return (i32.sub (i32.const -1)
        (i32.sub (call $message (global.get $io) (local.get $e)) (global.get $io))))))
    (call $status))

  (func $gs_returns (export "gs_returns") (result i32)
    (local $w i32) (local $won i32)
    (local.set $won (call $won))
    (local.set $w (i32.and (i32.add (call $plies) (i32.const 1)) (i32.const 1)))
    (f64.store (global.get $io) (f64.const 0))
    (f64.store offset=8 (global.get $io) (f64.const 0))
    (if (local.get $won)
      (then
        (f64.store (i32.add (global.get $io) (i32.shl (local.get $w) (i32.const 3)))
          (f64.const 1))
        (f64.store (i32.add (global.get $io) (i32.shl (i32.xor (local.get $w) (i32.const 1)) (i32.const 3)))
          (f64.const -1))))
    (i32.const 0))

;; ABI v2: gs_play, then the facts of the new position after it (at offset 8) that `want`
  ;; asks for: 2 the hash (8..16), 4 the immediate value (16..20), and 1 the number of moves
  ;; (20..24) and the moves (24..), or 8 at a finished game the utilities (24..40).
  (func (export "gs_step") (param $mv i32) (param $want i32) (result i32)
    (local $s i32) (local $pos i64) (local $n i32)
    (local.set $s (call $gs_play (local.get $mv)))
    (if (i32.lt_s (local.get $s) (i32.const 0)) (then (return (local.get $s))))
    ;; gs_moves and gs_returns write at the start of the I/O area: keep the position aside.
    (local.set $pos (i64.load (global.get $io)))
    (if (i32.ge_u (local.get $s) (i32.const 512))
      (then
        (if (i32.and (local.get $want) (i32.const 8))
          (then
            (drop (call $gs_returns))
            (memory.copy (i32.add (global.get $io) (i32.const 24)) (global.get $io) (i32.const 16)))))
      (else
        (if (i32.and (local.get $want) (i32.const 1))
          (then
            (local.set $n (call $gs_moves))
            (memory.copy (i32.add (global.get $io) (i32.const 24)) (global.get $io)
              (i32.shl (local.get $n) (i32.const 2)))
            (i32.store offset=20 (global.get $io) (local.get $n))))))
    (i64.store (global.get $io) (local.get $pos))
    (if (i32.and (local.get $want) (i32.const 2))
      (then (i64.store offset=8 (global.get $io) (call $gs_hash))))
    (if (i32.and (local.get $want) (i32.const 4))
      (then (i32.store offset=16 (global.get $io) (call $gs_immediate))))
    (local.get $s))

  ;; Base 3, cell 0 most significant: 0 empty, 1 X, 2 O.
  (func $gs_hash (export "gs_hash") (result i64)
    (local $x i32) (local $o i32) (local $i i32) (local $key i32)
    (local.set $x (call $x)) (local.set $o (call $o))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (i32.const 9)))
        (local.set $key (i32.add (i32.mul (local.get $key) (i32.const 3))
          (i32.add
            (i32.and (i32.shr_u (local.get $x) (local.get $i)) (i32.const 1))
            (i32.shl (i32.and (i32.shr_u (local.get $o) (local.get $i)) (i32.const 1)) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i64.extend_i32_u (local.get $key)))

  ;; +1 when the side to move completes a line at once, else none (i32::MIN).
  (func $gs_immediate (export "gs_immediate") (result i32)
    (local $mine i32) (local $occ i32) (local $i i32)
    (if (i32.ge_u (call $status) (i32.const 512)) (then (return (i32.const 0x80000000))))
    (local.set $mine (i32.load16_u (i32.add (global.get $io)
      (i32.shl (i32.and (call $plies) (i32.const 1)) (i32.const 1)))))
    (local.set $occ (i32.or (call $x) (call $o)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (i32.const 9)))
        (if (i32.eqz (i32.and (i32.shr_u (local.get $occ) (local.get $i)) (i32.const 1)))
          (then
            (if (call $wins (i32.or (local.get $mine) (i32.shl (i32.const 1) (local.get $i))))
              (then (return (i32.const 1))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 0x80000000))

  ;; Lists the cells of `mask` ascending as bytes at `at`; returns how many.
  (func $cells (param $mask i32) (param $at i32) (result i32)
    (local $i i32) (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (i32.const 9)))
        (if (i32.and (i32.shr_u (local.get $mask) (local.get $i)) (i32.const 1))
          (then
            (i32.store8 (i32.add (local.get $at) (local.get $n)) (local.get $i))
            (local.set $n (i32.add (local.get $n) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $n))

  ;; The cells in a legal order: the players' cells ascending, alternating, and in a won game
  ;; the winner's last stone one whose removal leaves no complete line.
  (func (export "gs_format_position") (result i32)
    (local $n i32) (local $w i32) (local $base i32) (local $mask i32) (local $k i32)
    (local $c i32) (local $i i32) (local $plies i32)
    (drop (call $cells (call $x) (i32.const 512)))
    (drop (call $cells (call $o) (i32.const 528)))
    (local.set $plies (call $plies))
    (if (call $won)
      (then
        (local.set $w (i32.and (i32.add (local.get $plies) (i32.const 1)) (i32.const 1)))
        (local.set $base (i32.add (i32.const 512) (i32.shl (local.get $w) (i32.const 4))))
        (local.set $mask (i32.load16_u (i32.add (global.get $io) (i32.shl (local.get $w) (i32.const 1)))))
        (local.set $n (call $cells (local.get $mask) (local.get $base)))
        (block $found
          (loop $try
            (br_if $found (i32.ge_u (local.get $k) (local.get $n)))
            (local.set $c (i32.load8_u (i32.add (local.get $base) (local.get $k))))
            (if (i32.eqz (call $wins (i32.and (local.get $mask)
                  (i32.xor (i32.shl (i32.const 1) (local.get $c)) (i32.const -1)))))
              (then
                ;; Move cell k to the end.
                (memory.copy (i32.add (local.get $base) (local.get $k))
                  (i32.add (local.get $base) (i32.add (local.get $k) (i32.const 1)))
                  (i32.sub (i32.sub (local.get $n) (local.get $k)) (i32.const 1)))
                (i32.store8 (i32.add (local.get $base) (i32.sub (local.get $n) (i32.const 1)))
                  (local.get $c))
                (br $found)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $try)))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $plies)))
        (i32.store8 (i32.add (global.get $io) (local.get $i))
          (i32.add (i32.const 49)
            (i32.load8_u (i32.add
              (i32.add (i32.const 512) (i32.shl (i32.and (local.get $i) (i32.const 1)) (i32.const 4)))
              (i32.shr_u (local.get $i) (i32.const 1))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $plies))

  (func $space (param $b i32) (result i32)
    (i32.or (i32.eq (local.get $b) (i32.const 32))
      (i32.and (i32.ge_u (local.get $b) (i32.const 9)) (i32.le_u (local.get $b) (i32.const 13)))))

  ;; The cell (0-8) written in bytes `from..to` (spaces around allowed), or -2 not a number,
  ;; -1 outside the board.
  (func $cell (param $from i32) (param $to i32) (result i32)
    (local $v i32) (local $b i32)
    (block $l (loop $trim
      (br_if $l (i32.ge_u (local.get $from) (local.get $to)))
      (br_if $l (i32.eqz (call $space (i32.load8_u (local.get $from)))))
      (local.set $from (i32.add (local.get $from) (i32.const 1)))
      (br $trim)))
    (block $r (loop $trim
      (br_if $r (i32.ge_u (local.get $from) (local.get $to)))
      (br_if $r (i32.eqz (call $space (i32.load8_u (i32.sub (local.get $to) (i32.const 1))))))
      (local.set $to (i32.sub (local.get $to) (i32.const 1)))
      (br $trim)))
    (if (i32.ge_u (local.get $from) (local.get $to)) (then (return (i32.const -2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $from) (local.get $to)))
        (local.set $b (i32.sub (i32.load8_u (local.get $from)) (i32.const 48)))
        (if (i32.gt_u (local.get $b) (i32.const 9)) (then (return (i32.const -2))))
        (local.set $v (i32.add (i32.mul (local.get $v) (i32.const 10)) (local.get $b)))
        ;; Past 3 digits the number is outside the board whatever follows.
        (if (i32.gt_u (local.get $v) (i32.const 999)) (then (local.set $v (i32.const 999))))
        (local.set $from (i32.add (local.get $from) (i32.const 1)))
        (br $next)))
    (if (result i32) (i32.or (i32.eqz (local.get $v)) (i32.gt_u (local.get $v) (i32.const 9)))
      (then (i32.const -1))
      (else (i32.sub (local.get $v) (i32.const 1)))))

  ;; The error word for message `code` (2 not a number) of move `k` (0: no move number).
  (func $error (param $k i32) (param $code i32) (result i32)
    (local $at i32) (local $d i32)
    (local.set $at (global.get $io))
    (if (local.get $k)
      (then
        (memory.copy (local.get $at) (i32.const 960) (i32.const 5))
        (local.set $at (i32.add (local.get $at) (i32.const 5)))
        (local.set $d (i32.const 1000))
        (block $done (loop $next
          (br_if $done (i32.eqz (local.get $d)))
          (if (i32.or (i32.ge_u (local.get $k) (local.get $d)) (i32.eq (local.get $d) (i32.const 1)))
            (then
              (i32.store8 (local.get $at)
                (i32.add (i32.const 48) (i32.rem_u (i32.div_u (local.get $k) (local.get $d)) (i32.const 10))))
              (local.set $at (i32.add (local.get $at) (i32.const 1)))))
          (local.set $d (i32.div_u (local.get $d) (i32.const 10)))
          (br $next)))
        (i32.store16 (local.get $at) (i32.const 0x203a))
        (local.set $at (i32.add (local.get $at) (i32.const 2)))))
    (local.set $at (call $message (local.get $at) (local.get $code)))
    (i32.sub (i32.const -1) (i32.sub (local.get $at) (global.get $io))))

  ;; Plays the cell of text `from..to`: 0, or an error code of $apply (2 not a number).
  (func $play_text (param $from i32) (param $to i32) (result i32)
    (local $c i32)
    (local.set $c (call $cell (local.get $from) (local.get $to)))
    (if (i32.eq (local.get $c) (i32.const -2)) (then (return (i32.const 2))))
    (if (i32.eq (local.get $c) (i32.const -1)) (then (return (i32.const 1))))
    (call $apply (local.get $c)))

  (func (export "gs_parse_position") (param $len i32) (result i32)
    (local $p i32) (local $end i32) (local $start i32) (local $k i32) (local $e i32)
    (local $comma i32)
    (if (i32.gt_u (local.get $len) (i32.const 1024)) (then (return (call $error (i32.const 0) (i32.const 2)))))
    (memory.copy (i32.const 1024) (global.get $io) (local.get $len))
    (i64.store (global.get $io) (i64.const 0))
    (local.set $end (i32.add (i32.const 1024) (local.get $len)))
    (local.set $p (i32.const 1024))
    (block $f (loop $find
      (br_if $f (i32.ge_u (local.get $p) (local.get $end)))
      (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 44)) (then (local.set $comma (i32.const 1))))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (br $find)))
    (local.set $p (i32.const 1024))
    (block $done
      (loop $next
        ;; Skip spaces; stop at the end.
        (block $s (loop $skip
          (br_if $s (i32.ge_u (local.get $p) (local.get $end)))
          (br_if $s (i32.eqz (call $space (i32.load8_u (local.get $p)))))
          (local.set $p (i32.add (local.get $p) (i32.const 1)))
          (br $skip)))
        (br_if $done (i32.and (i32.ge_u (local.get $p) (local.get $end)) (i32.eqz (local.get $k))))
        (local.set $start (local.get $p))
        (if (local.get $comma)
          (then
            (block $c (loop $item
              (br_if $c (i32.ge_u (local.get $p) (local.get $end)))
              (br_if $c (i32.eq (i32.load8_u (local.get $p)) (i32.const 44)))
              (local.set $p (i32.add (local.get $p) (i32.const 1)))
              (br $item))))
          (else
            (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (local.set $e (call $play_text (local.get $start) (local.get $p)))
        (if (local.get $e) (then (return (call $error (local.get $k) (local.get $e)))))
        (if (local.get $comma)
          (then
            (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
            ;; Past the comma; a trailing comma leaves an empty item.
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (if (i32.ge_u (local.get $p) (local.get $end))
              (then (return (call $error (i32.add (local.get $k) (i32.const 1)) (i32.const 2)))))))
        (br $next)))
    (call $status))

  (func (export "gs_format_move") (param $mv i32) (result i32)
    (i32.store8 (global.get $io) (i32.add (local.get $mv) (i32.const 49)))
    (i32.const 1))

  ;; Position at the I/O area, the text after it (at offset 8).
  (func (export "gs_parse_move") (param $len i32) (result i32)
    (local $c i32)
    (if (i32.gt_u (local.get $len) (i32.const 1000)) (then (return (call $error (i32.const 0) (i32.const 2)))))
    (local.set $c (call $cell (i32.add (global.get $io) (i32.const 8))
      (i32.add (global.get $io) (i32.add (i32.const 8) (local.get $len)))))
    (if (i32.eq (local.get $c) (i32.const -2)) (then (return (call $error (i32.const 0) (i32.const 2)))))
    (if (i32.eq (local.get $c) (i32.const -1)) (then (return (call $error (i32.const 0) (i32.const 1)))))
    (if (i32.ge_u (call $status) (i32.const 512)) (then (return (call $error (i32.const 0) (i32.const 3)))))
    (if (i32.and (i32.shr_u (i32.or (call $x) (call $o)) (local.get $c)) (i32.const 1))
      (then (return (call $error (i32.const 0) (i32.const 4)))))
    (local.get $c))
)
