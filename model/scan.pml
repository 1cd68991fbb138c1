/*
 * scan.pml -- Promela model of the gpuscan inter-workgroup tile-state
 * protocol (Decoupled Look-back "csdl" and Decoupled Fallback "csdldf").
 *
 * See docs/protocol.md for the protocol, its invariants and what this model
 * abstracts.  model/verify.sh runs every check.
 *
 * Granularity: one Promela step == one atomic memory operation on the shared
 * state (atomicAdd on the tile counter, atomicMax on one spine word, atomic
 * load of one spine word).  Purely local computation is folded into the step
 * of an adjacent memory operation; no other process can observe it.  Spin
 * explores every interleaving of these steps.  The K words of one post or
 * fallback insertion are written in either order (K threads write them in
 * the kernel).  Interleaving is stronger than the GPU's relaxed atomics;
 * -DSTALE_LOADS weakens every load to "any value this word ever held".  See
 * docs/protocol.md, "Memory model", for why per-location reasoning suffices.
 *
 * Build switches (spin -D...):
 *   NT=3|4          number of tiles (at most 4)           (default 4)
 *   NWG=2|3         number of resident workgroups         (default 3)
 *   FALLBACK=0|1    0 = csdl (spin forever), 1 = csdldf   (default 1)
 *   MAX_SPINS=n     look-back retries before a fallback   (default 2)
 *   BLOCKING=0|1    owners of tiles > 0 may skip the READY post
 *                   (simulated blocking), chosen nondeterministically per tile
 *                   (default 1)
 *   STALE_LOADS     a load may return ANY value its word ever held, not
 *                   just the latest (over-approximates relaxed loads)
 *   BROKEN_STORE    mutant: fallback insertion is a load followed by a plain
 *                   store instead of atomicMax  -> must violate monotonicity
 *   BROKEN_FB_INCLUSIVE  mutant: fallbacks insert INCLUSIVE|aggregate for
 *                   every tile, not just tile 0 -> must violate S2 (with S2
 *                   disabled, a wrong prefix follows)
 *   BROKEN_TORN     mutant: look-back trusts word 0's state alone instead of
 *                   requiring all K words to agree -> must compute a wrong
 *                   prefix
 *   PROBE=1|2|3     reachability probes (the assertion is EXPECTED to fail,
 *                   proving the scenario is reachable, i.e. the safety
 *                   result is not vacuous):
 *                     1: a look-back read is torn (words in different states)
 *                     2: a fallback insertion on a tile > 0 finds the tile
 *                        already INCLUSIVE (false-positive fallback)
 *                     3: a "successful insertion" (read-back state NOT_READY)
 *
 * Starvation ("a workgroup is never scheduled again, at any point") needs no
 * switch: the liveness check (pan -l) is run WITHOUT any fairness assumption,
 * so Spin considers every schedule, including those that stop running some
 * workgroup forever.
 */

#ifndef NT
#define NT 4
#endif
#ifndef NWG
#define NWG 3
#endif
#ifndef FALLBACK
#define FALLBACK 1
#endif
#ifndef MAX_SPINS
#define MAX_SPINS 2
#endif
#ifndef BLOCKING
#define BLOCKING 1
#endif
#ifndef PROBE
#define PROBE 0
#endif

/* ---- tile-state word encoding ------------------------------------------
 * The real spine word is  state<<30 | piece  with a 16-bit piece.  Here a
 * word is  state*SHIFT + piece  with pieces < SHIFT, which preserves the only
 * property the protocol uses: the state lives in the most significant bits,
 * so integer max orders words by state first.  K = 2 words per tile; a value
 * v is split into pieces base B:  piece_0 = v % B,  piece_1 = v / B.
 */
#define K          2
#define B          4
#define SHIFT      16
#define NOT_READY  0
#define READY      1
#define INCLUSIVE  2

#define WORD(s, p)     ((s) * SHIFT + (p))
#define ST(w)          ((w) / SHIFT)
#define PC(w)          ((w) % SHIFT)
#define PIECE(v, j)    (((v) >> (2 * (j))) % B)     /* B == 4 == 1 << 2 */
#define VAL(w0, w1)    (PC(w0) + B * PC(w1))

/* ---- inputs (monoid: + on small naturals) -------------------------------
 * AGG(t)  : aggregate of tile t's inputs (what the owner AND any fallback
 *           compute: same input, same reduction function, same value).
 * EXCL(t) : reference exclusive prefix, sum of AGG(u) for u < t.
 * The values are chosen so that for tiles 1 and 2 (the tiles that can be
 * READY and are read by a successor) every torn combination of a READY and
 * an INCLUSIVE word decodes to a wrong value.
 *   t      0  1  2  3
 *   AGG    3  2  3  1
 *   EXCL   0  3  5  8
 *   INCL   3  5  8  9   (pieces: (3,0) (1,1) (0,2) (1,2))
 */
#define AGG(t)   ((4899  >> (4 * (t))) & 15)     /* 0x1323: nibbles 3,2,3,1 */
#define EXCL(t)  ((34096 >> (4 * (t))) & 15)     /* 0x8530: nibbles 0,3,5,8 */
#define INCL(t)  (EXCL(t) + AGG(t))

/* ---- assertion tags --------------------------------------------------------
 * Constant-true flags. Each assertion is written  assert(TAG && condition)
 * so that Spin's report ("assertion violated (S1_monotonic&&...)") names the
 * property; verify.sh matches on these names. hidden: not in the state vector.
 */
hidden byte S1_monotonic = 1;               /* no spine word ever decreases   */
hidden byte S2_well_formed = 1;             /* word payload matches its state */
hidden byte S3_prefix = 1;                  /* exclusive prefix is correct    */
hidden byte S4_all_inclusive = 1;           /* at the end all tiles INCLUSIVE */
hidden byte PROBE_torn_read = 1;
hidden byte PROBE_false_positive = 1;
hidden byte PROBE_successful_insertion = 1;

/* ---- shared state -------------------------------------------------------- */
byte counter = 0;          /* global atomic tile-id counter                  */
byte spine[NT * K];        /* all zero = NOT_READY, payload 0                */
byte ndone = 0;            /* ghost: tiles whose owner finished             */
#ifdef STALE_LOADS
byte was_ready = 0;        /* ghost: bit i set once spine[i] held READY     */
#endif

/* Every write to the spine goes through set_word, which checks
 *  (S1) monotonicity: a word never decreases (so its state never regresses);
 *  (S2) well-formedness: NOT_READY words carry 0, READY words of tile t carry
 *       piece_j(AGG(t)), INCLUSIVE words carry piece_j(INCL(t)).            */
inline set_word(idx, v) {
	assert(S1_monotonic && v >= spine[idx]);
	spine[idx] = v;
#ifdef STALE_LOADS
	if
	:: ST(v) == READY -> was_ready = was_ready | (1 << (idx))
	:: else -> skip
	fi;
#endif
	assert(S2_well_formed &&
	       ((ST(spine[idx]) == NOT_READY && PC(spine[idx]) == 0) ||
	        (ST(spine[idx]) == READY &&
	         PC(spine[idx]) == PIECE(AGG((idx) / K), (idx) % K)) ||
	        (ST(spine[idx]) == INCLUSIVE &&
	         PC(spine[idx]) == PIECE(INCL((idx) / K), (idx) % K))))
}

/* old = atomicMax(spine[idx], v) : one indivisible read-modify-write */
inline amax_body(idx, v, old) {
	old = spine[idx];
	if
	:: v > old -> set_word(idx, v)
	:: else -> skip
	fi
}
inline atomic_max(idx, v, old) {
	d_step { amax_body(idx, v, old) }
}

/* fallback insertion of one word */
#ifdef BROKEN_STORE
inline fb_insert(idx, v, old) {
	old = spine[idx];             /* relaxed load ...                           */
	d_step { set_word(idx, v) }   /* ... then a plain relaxed store            */
}
#else
#define fb_insert(idx, v, old) atomic_max(idx, v, old)
#endif
/* state a fallback inserts: INCLUSIVE for tile 0, READY otherwise */
#ifdef BROKEN_FB_INCLUSIVE
#define FB_STATE(c)  INCLUSIVE
#else
#define FB_STATE(c)  (((c) == 0) * INCLUSIVE + ((c) != 0) * READY)
#endif

/* dst = atomicLoad(spine[idx]).
 * With STALE_LOADS the load may return ANY value the word has ever held
 * (its modification order is 0 <= READY piece <= INCLUSIVE piece, and the
 * ghost mask was_ready remembers whether it ever held the READY piece).
 * That over-approximates relaxed loads: they need not return the latest
 * value, are not ordered with loads of other words, and here do not even
 * have to respect read-read coherence.                                    */
#ifdef STALE_LOADS
inline load_word(dst, idx) {
	if
	:: dst = spine[idx]
	:: dst = 0
	:: (was_ready & (1 << (idx))) != 0 ->
		dst = WORD(READY, PIECE(AGG((idx) / K), (idx) % K))
	fi
}
#else
inline load_word(dst, idx) {
	dst = spine[idx]
}
#endif

/* look-back acceptance of a (possibly torn) pair of loads */
#ifdef BROKEN_TORN
#define IS_INCL(w0, w1)   (ST(w0) == INCLUSIVE)
#define IS_READY(w0, w1)  (ST(w0) == READY)
#else
#define IS_INCL(w0, w1)   (ST(w0) == INCLUSIVE && ST(w1) == INCLUSIVE)
#define IS_READY(w0, w1)  (ST(w0) == READY && ST(w1) == READY)
#endif

/* ghost bookkeeping when an owner has posted both INCLUSIVE words */
inline tile_done() {
	ndone++;
	/* (S4) once every tile is done, the whole spine is INCLUSIVE */
	if
	:: ndone == NT ->
		gi = 0;
		do
		:: gi < NT * K -> assert(S4_all_inclusive && ST(spine[gi]) == INCLUSIVE); gi++
		:: else -> break
		od;
		gi = 0
	:: else -> skip
	fi;
	t = 0; prefix = 0; cur = 0; o0 = 0
}

/* One process per resident workgroup slot: it repeatedly launches a
 * workgroup, which claims the next tile id from the counter.  Consequently
 * every tile below a claimed tile has already been claimed by a workgroup
 * that started earlier.                                                    */
active [NWG] proctype WG()
{
	byte t;           /* my tile                                          */
	byte cur;         /* look-back position                               */
	byte prefix;      /* accumulated exclusive prefix                     */
	byte spins;       /* failed reads of tile cur                         */
	byte w0, w1;      /* the two loads of a look-back read                */
	byte o0, o1;      /* values returned by the fallback's atomicMax      */
	byte gi;          /* ghost loop index for (S4)                        */

	do
	:: /* t = atomicAdd(counter, 1)  (saturated: keeps the state space finite) */
	d_step {
		t = counter;
		if
		:: counter < NT -> counter++
		:: else -> skip
		fi
	};
	if
	:: t >= NT -> break                   /* no tiles left: slot retires   */
	:: t == 0 -> goto post_inclusive      /* tile 0: inclusive == aggregate */
	:: else
	fi;

	/* post READY | aggregate, word by word -- unless simulated-blocked */
	if
	:: BLOCKING -> skip                               /* blocked: no READY  */
	:: true ->
		if   /* the K words are written by K threads: any order */
		:: atomic_max(K * t,     WORD(READY, PIECE(AGG(t), 0)), o0);
		   atomic_max(K * t + 1, WORD(READY, PIECE(AGG(t), 1)), o0)
		:: atomic_max(K * t + 1, WORD(READY, PIECE(AGG(t), 1)), o0);
		   atomic_max(K * t,     WORD(READY, PIECE(AGG(t), 0)), o0)
		fi;
		o0 = 0
	fi;
	cur = t - 1;

lookback:
	atomic { load_word(w0, K * cur) }      /* atomic load, word 0 */
	atomic {
		load_word(w1, K * cur + 1);        /* atomic load, word 1 */
		if
		:: IS_INCL(w0, w1) ->
			prefix = prefix + VAL(w0, w1);
			w0 = 0; w1 = 0; cur = 0; spins = 0;
			goto post_inclusive
		:: !IS_INCL(w0, w1) && IS_READY(w0, w1) ->
			assert(cur > 0);    /* tile 0 is never READY (it goes 0 -> INCLUSIVE) */
			prefix = prefix + VAL(w0, w1);
			w0 = 0; w1 = 0; spins = 0;
			cur--;
			goto lookback
		:: else ->                         /* NOT_READY or torn: not ready */
#if PROBE == 1
			assert(PROBE_torn_read && ST(w0) == ST(w1));
#endif
			w0 = 0; w1 = 0;
#if FALLBACK
			spins++;
			if
			:: spins < MAX_SPINS -> goto lookback
			:: else -> spins = 0; goto fallback
			fi
#else
			goto lookback                  /* csdl: spin forever */
#endif
		fi
	}

fallback:
	/* Reduce tile cur's input locally (same value as its owner), then try to
	 * insert it: S = INCLUSIVE for tile 0, READY otherwise.                  */
	if   /* any word order, as above */
	:: fb_insert(K * cur,     WORD(FB_STATE(cur), PIECE(AGG(cur), 0)), o0);
	   fb_insert(K * cur + 1, WORD(FB_STATE(cur), PIECE(AGG(cur), 1)), o1)
	:: fb_insert(K * cur + 1, WORD(FB_STATE(cur), PIECE(AGG(cur), 1)), o1);
	   fb_insert(K * cur,     WORD(FB_STATE(cur), PIECE(AGG(cur), 0)), o0)
	fi;
	atomic {
#if PROBE == 2
		assert(PROBE_false_positive &&
		       !(cur > 0 && ST(o0) == INCLUSIVE && ST(o1) == INCLUSIVE));
#endif
#if PROBE == 3
		assert(PROBE_successful_insertion &&
		       !(ST(o0) == NOT_READY && ST(o1) == NOT_READY));
#endif
		if
		:: ST(o0) == INCLUSIVE && ST(o1) == INCLUSIVE ->
			/* someone (the owner, or for tile 0 anyone) already published
			 * the inclusive value: take it, the look-back is over */
			prefix = prefix + VAL(o0, o1);
			o0 = 0; o1 = 0; cur = 0;
			goto post_inclusive
		:: else ->
			prefix = prefix + AGG(cur);
			o0 = 0; o1 = 0;
			if
			:: cur == 0 -> goto post_inclusive
			:: else -> cur--; goto lookback
			fi
		fi
	}

post_inclusive:
	/* (S3) the exclusive prefix used for this tile's output is correct */
	assert(S3_prefix && prefix == EXCL(t));
	if   /* any word order, as above */
	:: atomic_max(K * t,          WORD(INCLUSIVE, PIECE(prefix + AGG(t), 0)), o0);
progress:                                     /* a tile is completed */
	   d_step { amax_body(K * t + 1, WORD(INCLUSIVE, PIECE(prefix + AGG(t), 1)), o0);
	            tile_done() }
	:: atomic_max(K * t + 1,      WORD(INCLUSIVE, PIECE(prefix + AGG(t), 1)), o0);
progress1:
	   d_step { amax_body(K * t,  WORD(INCLUSIVE, PIECE(prefix + AGG(t), 0)), o0);
	            tile_done() }
	fi
	od
}
