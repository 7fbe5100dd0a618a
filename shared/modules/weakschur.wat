;; Weak Schur numbers as a single-player game module (ABI v2, docs/GAME_MODULES.md), written to
;; equal the catalogue's `weakschur` for k = 1 to 5 sets: put 1, 2, 3, ... in turn into one of
;; `k` sets so that no set holds x, y and x + y with x != y; the game ends when the next number
;; fits nowhere, and the score is the count of numbers placed. Sets are opened in order. A move
;; is the catalogue's move code, `(number - 1) * k + set` (sets from 0), so NRPA's policy sees
;; the same codes; the moves of a position are its sets ascending, as in the catalogue. The
;; module stops a game at 255 numbers (the catalogue at 1023): the same game while no game gets
;; that far, and the best known 5-set games place 196 (WS(1..4) = 2, 8, 23, 66).
;;
;; Position, 324 bytes: 0..2 numbers placed (u16), 2 sets opened (u8), 3 zero, 4..164 the
;; members of set j as 256 bits at 4 + 32 j (bit x: number x), 164..324 the sums forbidden in
;; set j at 164 + 32 j (bit z: z = x + y for two different members).
;; Memory: 256 the description; 768.. messages; 1024 a copy of the text being parsed (and the
;; text of a position being written); 4096 the I/O area. Global $k: the number of sets, from gs_init.

(module
  (memory (export "memory") 1)
  (global $io i32 (i32.const 4096))
  (global $k (mut i32) (i32.const 4))
  (data (i32.const 256)
    "name=weakschur\nplayers=1\nmin_value=0\nmax_value=255\nposition_bytes=324\nmax_moves=5\nmove_bound=1280\nmax_plies=255\nio_bytes=1024\nparam=k 1 5 4 number of sets\n")
  (data (i32.const 768) "not a set number")
  (data (i32.const 800) "no such set, or opened too early, or a sum of two of its members")
  (data (i32.const 880) "the game is over")

  (func (export "gs_abi_version") (result i32)
    (i32.const 2))
  (func (export "gs_io") (result i32)
    (global.get $io))
  (func (export "gs_describe") (result i32)
    (memory.copy (global.get $io) (i32.const 256) (i32.const 155))
    (i32.const 155))

  (func $placed (result i32) (i32.load16_u (global.get $io)))
  (func $opened (result i32) (i32.load8_u offset=2 (global.get $io)))

  ;; Bit `x` of the 256-bit set at `at`.
  (func $bit (param $at i32) (param $x i32) (result i32)
    (i32.and
      (i32.load8_u (i32.add (local.get $at) (i32.shr_u (local.get $x) (i32.const 3))))
      (i32.shl (i32.const 1) (i32.and (local.get $x) (i32.const 7)))))

  ;; The sets the next number may go into: opened ones, and the first unopened one.
  (func $open (result i32)
    (local $o i32)
    (local.set $o (i32.add (call $opened) (i32.const 1)))
    (if (result i32) (i32.gt_u (local.get $o) (global.get $k))
      (then (global.get $k)) (else (local.get $o))))

  ;; Whether number `z` may go into set `j` (`j` below $open).
  (func $fits (param $j i32) (param $z i32) (result i32)
    (i32.eqz (call $bit
      (i32.add (i32.add (global.get $io) (i32.const 164)) (i32.shl (local.get $j) (i32.const 5)))
      (local.get $z))))

  (func $status (result i32)
    (local $z i32) (local $j i32) (local $n i32)
    (local.set $z (i32.add (call $placed) (i32.const 1)))
    (if (i32.ge_u (local.get $z) (i32.const 256)) (then (return (i32.const 512))))
    (local.set $n (call $open))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
        (if (call $fits (local.get $j) (local.get $z)) (then (return (i32.const 0))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $next)))
    (i32.const 512))

  ;; "k=N" among the parameter lines at the I/O area (`len` bytes): sets $k (default 4).
  (func (export "gs_init") (param $len i32) (result i32)
    (local $p i32) (local $end i32)
    (local.set $p (global.get $io))
    (local.set $end (i32.add (global.get $io) (local.get $len)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (i32.add (local.get $p) (i32.const 2)) (local.get $end)))
        (if (i32.and
              (i32.eq (i32.load8_u (local.get $p)) (i32.const 107))
              (i32.eq (i32.load8_u offset=1 (local.get $p)) (i32.const 61)))
          (then
            (global.set $k (i32.sub (i32.load8_u offset=2 (local.get $p)) (i32.const 48)))
            (br $done)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next)))
    (if (i32.or (i32.lt_s (global.get $k) (i32.const 1)) (i32.gt_s (global.get $k) (i32.const 5)))
      (then
        (memory.copy (global.get $io) (i32.const 768) (i32.const 16))
        (return (i32.const -17))))
    (memory.fill (global.get $io) (i32.const 0) (i32.const 324))
    (call $status))

  (func (export "gs_status") (result i32)
    (call $status))

  (func (export "gs_moves") (result i32)
    (call $moves (global.get $io)))

  ;; Writes the moves of the position in the I/O area at `at`; returns how many.
  (func $moves (param $at i32) (result i32)
    (local $z i32) (local $j i32) (local $n i32) (local $open i32) (local $base i32)
    (local.set $z (i32.add (call $placed) (i32.const 1)))
    (local.set $open (call $open))
    (local.set $base (i32.mul (call $placed) (global.get $k)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $j) (local.get $open)))
        (if (call $fits (local.get $j) (local.get $z))
          (then
            (i32.store (i32.add (local.get $at) (i32.shl (local.get $n) (i32.const 2)))
              (i32.add (local.get $base) (local.get $j)))
            (local.set $n (i32.add (local.get $n) (i32.const 1)))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $next)))
    (local.get $n))

  ;; Puts the next number into set `j` of the position at the I/O area: 0, 1 the set may not
  ;; take it, 3 the game is over.
  (func $apply (param $j i32) (result i32)
    (local $z i32) (local $m i32) (local $f i32) (local $w i32) (local $src i32)
    (local $bits i64) (local $shift i64)
    (if (i32.ge_u (call $status) (i32.const 512)) (then (return (i32.const 3))))
    (local.set $z (i32.add (call $placed) (i32.const 1)))
    (if (i32.ge_u (local.get $j) (call $open)) (then (return (i32.const 1))))
    (if (i32.eqz (call $fits (local.get $j) (local.get $z))) (then (return (i32.const 1))))
    (local.set $m (i32.add (i32.add (global.get $io) (i32.const 4)) (i32.shl (local.get $j) (i32.const 5))))
    (local.set $f (i32.add (local.get $m) (i32.const 160)))
    ;; forbidden |= members << z, over four 64-bit words, the highest first.
    (local.set $shift (i64.extend_i32_u (i32.and (local.get $z) (i32.const 63))))
    (local.set $w (i32.const 3))
    (block $done
      (loop $next
        (local.set $src (i32.sub (local.get $w) (i32.shr_u (local.get $z) (i32.const 6))))
        (if (i32.ge_s (local.get $src) (i32.const 0))
          (then
            (local.set $bits (i64.shl
              (i64.load (i32.add (local.get $m) (i32.shl (local.get $src) (i32.const 3))))
              (local.get $shift)))
            (if (i32.and (i64.ne (local.get $shift) (i64.const 0)) (i32.gt_s (local.get $src) (i32.const 0)))
              (then
                (local.set $bits (i64.or (local.get $bits)
                  (i64.shr_u
                    (i64.load (i32.add (local.get $m)
                      (i32.shl (i32.sub (local.get $src) (i32.const 1)) (i32.const 3))))
                    (i64.sub (i64.const 64) (local.get $shift)))))))
            (i64.store (i32.add (local.get $f) (i32.shl (local.get $w) (i32.const 3)))
              (i64.or (i64.load (i32.add (local.get $f) (i32.shl (local.get $w) (i32.const 3))))
                (local.get $bits)))))
        (br_if $done (i32.eqz (local.get $w)))
        (local.set $w (i32.sub (local.get $w) (i32.const 1)))
        (br $next)))
    (i32.store8 (i32.add (local.get $m) (i32.shr_u (local.get $z) (i32.const 3)))
      (i32.or (i32.load8_u (i32.add (local.get $m) (i32.shr_u (local.get $z) (i32.const 3))))
        (i32.shl (i32.const 1) (i32.and (local.get $z) (i32.const 7)))))
    (i32.store16 (global.get $io) (local.get $z))
    (if (i32.eq (local.get $j) (call $opened))
      (then (i32.store8 offset=2 (global.get $io) (i32.add (local.get $j) (i32.const 1)))))
    (i32.const 0))

  ;; The set of move `mv` at the position in the I/O area, or -1 when `mv` is not of its number.
  (func $set_of (param $mv i32) (result i32)
    (local $j i32)
    (local.set $j (i32.sub (local.get $mv) (i32.mul (call $placed) (global.get $k))))
    (if (result i32) (i32.lt_u (local.get $j) (global.get $k))
      (then (local.get $j)) (else (i32.const -1))))

  ;; The error word of message `code` (1 the set may not take it, 2 not a number, 3 over).
  (func $error (param $code i32) (result i32)
    (local $src i32) (local $len i32)
    (local.set $src (i32.const 800)) (local.set $len (i32.const 64))
    (if (i32.eq (local.get $code) (i32.const 2))
      (then (local.set $src (i32.const 768)) (local.set $len (i32.const 16))))
    (if (i32.eq (local.get $code) (i32.const 3))
      (then (local.set $src (i32.const 880)) (local.set $len (i32.const 16))))
    (memory.copy (global.get $io) (local.get $src) (local.get $len))
    (i32.sub (i32.const -1) (local.get $len)))

  (func $gs_play (export "gs_play") (param $mv i32) (result i32)
    (local $e i32)
    (local.set $e (call $apply (call $set_of (local.get $mv))))
    (if (local.get $e) (then (return (call $error (local.get $e)))))
    (call $status))

  (func (export "gs_returns") (result i32)
    (f64.store (global.get $io) (f64.convert_i32_u (call $placed)))
    (i32.const 0))

  ;; FNV-1a over the members (they determine the position).
  (func $gs_hash (export "gs_hash") (result i64)
    (local $h i64) (local $p i32) (local $end i32)
    (local.set $h (i64.const 0xcbf29ce484222325))
    (local.set $p (i32.add (global.get $io) (i32.const 4)))
    (local.set $end (i32.add (local.get $p) (i32.const 160)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $h (i64.mul (i64.xor (local.get $h) (i64.load (local.get $p)))
          (i64.const 0x100000001b3)))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (br $next)))
    (i64.xor (local.get $h) (i64.extend_i32_u (call $placed))))

  ;; ABI v2: gs_play, then the facts of the new position after it (at offset 328): 2 the hash
  ;; (328..336), and 1 the number of moves (340..344) and the moves (344..), or 8 at a
  ;; finished game the score (344..352).
  (func (export "gs_step") (param $mv i32) (param $want i32) (result i32)
    (local $s i32)
    (local.set $s (call $gs_play (local.get $mv)))
    (if (i32.lt_s (local.get $s) (i32.const 0)) (then (return (local.get $s))))
    (if (i32.and (local.get $want) (i32.const 2))
      (then (i64.store offset=328 (global.get $io) (call $gs_hash))))
    (i32.store offset=336 (global.get $io) (i32.const 0x80000000))
    (if (i32.ge_u (local.get $s) (i32.const 512))
      (then
        (if (i32.and (local.get $want) (i32.const 8))
          (then (f64.store offset=344 (global.get $io) (f64.convert_i32_u (call $placed))))))
      (else
        (if (i32.and (local.get $want) (i32.const 1))
          (then
            (i32.store offset=340 (global.get $io)
              (call $moves (i32.add (global.get $io) (i32.const 344))))))))
    (local.get $s))

  ;; The set (0-based) of each number placed, as digits 1-5.
  (func (export "gs_format_position") (result i32)
    (local $x i32) (local $j i32) (local $n i32)
    (local.set $n (call $placed))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $found
          (loop $try
            (br_if $found (call $bit
              (i32.add (i32.add (global.get $io) (i32.const 4)) (i32.shl (local.get $j) (i32.const 5)))
              (i32.add (local.get $x) (i32.const 1))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $try)))
        (i32.store8 (i32.add (i32.const 1024) (local.get $x)) (i32.add (local.get $j) (i32.const 49)))
        (local.set $x (i32.add (local.get $x) (i32.const 1)))
        (br $next)))
    (memory.copy (global.get $io) (i32.const 1024) (local.get $n))
    (local.get $n))

  ;; Digits 1-5, one per number; blanks and commas ignored.
  (func (export "gs_parse_position") (param $len i32) (result i32)
    (local $p i32) (local $end i32) (local $b i32) (local $e i32)
    (if (i32.gt_u (local.get $len) (i32.const 1000)) (then (return (call $error (i32.const 2)))))
    (memory.copy (i32.const 1024) (global.get $io) (local.get $len))
    (memory.fill (global.get $io) (i32.const 0) (i32.const 324))
    (local.set $p (i32.const 1024))
    (local.set $end (i32.add (i32.const 1024) (local.get $len)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $b (i32.load8_u (local.get $p)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br_if $next (i32.or (i32.eq (local.get $b) (i32.const 44))
          (i32.or (i32.eq (local.get $b) (i32.const 32))
            (i32.and (i32.ge_u (local.get $b) (i32.const 9)) (i32.le_u (local.get $b) (i32.const 13))))))
        (local.set $b (i32.sub (local.get $b) (i32.const 49)))
        (if (i32.gt_u (local.get $b) (i32.const 8)) (then (return (call $error (i32.const 2)))))
        (local.set $e (call $apply (local.get $b)))
        (if (local.get $e) (then (return (call $error (local.get $e)))))
        (br $next)))
    (call $status))

  (func (export "gs_format_move") (param $mv i32) (result i32)
    (local $j i32)
    (local.set $j (call $set_of (local.get $mv)))
    (if (i32.lt_s (local.get $j) (i32.const 0)) (then (return (call $error (i32.const 1)))))
    (i32.store8 (global.get $io) (i32.add (local.get $j) (i32.const 49)))
    (i32.const 1))

  ;; The position at the I/O area, the text after it (at offset 324): one set number.
  (func (export "gs_parse_move") (param $len i32) (result i32)
    (local $p i32) (local $end i32) (local $b i32) (local $v i32) (local $digits i32)
    (local.set $p (i32.add (global.get $io) (i32.const 324)))
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $b (i32.load8_u (local.get $p)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br_if $next (i32.eq (local.get $b) (i32.const 32)))
        (local.set $b (i32.sub (local.get $b) (i32.const 48)))
        (if (i32.gt_u (local.get $b) (i32.const 9)) (then (return (call $error (i32.const 2)))))
        (local.set $v (i32.add (i32.mul (local.get $v) (i32.const 10)) (local.get $b)))
        (if (i32.gt_u (local.get $v) (i32.const 99)) (then (local.set $v (i32.const 99))))
        (local.set $digits (i32.add (local.get $digits) (i32.const 1)))
        (br $next)))
    (if (i32.eqz (local.get $digits)) (then (return (call $error (i32.const 2)))))
    (if (i32.ge_u (call $status) (i32.const 512)) (then (return (call $error (i32.const 3)))))
    (if (i32.or (i32.eqz (local.get $v)) (i32.gt_u (local.get $v) (call $open)))
      (then (return (call $error (i32.const 1)))))
    (local.set $v (i32.sub (local.get $v) (i32.const 1)))
    (if (i32.eqz (call $fits (local.get $v) (i32.add (call $placed) (i32.const 1))))
      (then (return (call $error (i32.const 1)))))
    (i32.add (i32.mul (call $placed) (global.get $k)) (local.get $v)))
)
