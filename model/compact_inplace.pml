/*
 * compact_inplace.pml -- Promela model of in-place compaction (select and
 * unique with the output over the input) on the tile-state protocol of
 * scan.pml, with the claim word that makes it safe.
 *
 * See docs/protocol.md, "In-place compaction", for the protocol and what
 * this model proves; model/verify.sh runs every check.
 *
 * The problem.  Compaction writes kept element k to rank(k) <= k, so a
 * tile's scatter lands on the input of tiles at or before it.  In the scan's
 * protocol a fallback may count a stalled tile and publish the count before
 * the tile's owner has read its input; successors then scatter over input
 * the late owner still has to read.
 *
 * The protocol modelled here (docs/protocol.md has the argument):
 *  - Each tile has a CLAIM word, 0 or CLAIMED|count.  Whoever wants a tile's
 *    count from its input (its owner, or a fallback) reads the input first,
 *    then compare-and-swaps the claim from 0 to CLAIMED|count, with a
 *    release fence between the reads and the CAS.  The one CAS that finds 0
 *    makes its workgroup the tile's HOLDER: it holds the tile's elements
 *    and scatters them.  Every other claimer takes the count from the claim
 *    word and throws its own reads away (they may be of clobbered input);
 *    a late owner that loses skips its tile altogether.
 *  - A tile's count is published (READY, INCLUSIVE, or through the claim
 *    word) only after it has been claimed, so no one scatters over a tile's
 *    input before its holder has read it.
 *  - The look-back never claims a tile whose exclusive prefix it does not
 *    know: it walks DOWN from t-1 collecting READY tiles until it meets an
 *    INCLUSIVE one; a tile that stays not ready is skipped, not fallen back
 *    on (the first, newest, such tile is the "gap"); past the gap it only
 *    looks for the next INCLUSIVE tile.  If there was a gap, it walks
 *    UP again from the INCLUSIVE tile (or from tile 0) to the gap, now
 *    knowing each tile's prefix P_u, a window a step: the READY, INCLUSIVE
 *    and claimed tiles (count from the claim word) from its cursor on are
 *    taken at once and posted INCLUSIVE; the first tile neither ready nor
 *    claimed is claimed: a winner posts INCLUSIVE P_u+a_u and scatters the
 *    tile at once, a loser posts INCLUSIVE P_u+a_u with the claim word's
 *    count.  So a workgroup holds its own tile and at most one other.
 *  - Acquire: the look-back's spine and claim reads are followed by an
 *    acq_rel fence before anything is posted or scattered from them (after
 *    the walk, and after each claim's CAS, won or lost).
 *
 * Memory model of this model.  Interleaving (one step = one memory
 * operation of one workgroup) of: the spine words and claim words (atomics)
 * and the in-place array (plain loads and stores).  The fences make a
 * holder's input reads happen before every scatter over that input (the
 * scatterer's prefix was acquired from a chain of releases rooted in the
 * holder's claim), so in-order execution is what the fences buy; the
 * EARLY_PUBLISH mutant is the protocol without the release fence: the
 * claim (and the READY post) may then become visible before the reads are
 * done, which the model expresses by doing the reads after them.
 * -DSTALE_LOADS: a spine load may return any value its word ever held and a
 * claim pre-check may return 0 (the CAS itself reads the latest value).
 *
 * Build switches (spin -D...):
 *   NT=3|4        number of tiles, 2 elements each           (default 4)
 *   NWG=2|3       resident workgroups                        (default 3)
 *   K=1|2         spine words per tile (2: torn reads)       (default 1)
 *   UNIQUE=0|1    0: select (keep by a predicate of the value),
 *                 1: unique (keep the first of each run: a tile also reads
 *                 the last element of the tile before it)    (default 0)
 *   MAX_SPINS=n   failed down-walk reads before a tile is skipped (default 1)
 *   BLOCKING=0|1  owners of tiles < NT-1 may abandon their tile without
 *                 reading it (simulated blocking: a fallback must do it)
 *   STALE_LOADS   see above
 * Mutants (verify.sh expects each to be caught):
 *   EARLY_PUBLISH     the claim and READY post before the input is read
 *                     (no release fence)            -> S5_no_clobber
 *   CLAIM_MAX         the claim by atomicMax instead of CAS: a loser whose
 *                     reads were clobbered raises the count -> S2_well_formed
 *   LOSER_OWN_COUNT   a claimer that lost uses the count of its own reads,
 *                     not the claim word's           -> S2_well_formed
 *   OWNER_NO_SKIP     a late owner that lost its claim processes its tile
 *                     anyway, from what it read      -> S5_no_clobber
 *   SCAN_FALLBACK     no claim at all: the scan's fallback (count the
 *                     stalled tile's input, publish the count), the owner
 *                     always scatters: the protocol in place as it stands
 *                                                    -> S5_no_clobber
 *   WINDOW_SKIPS_UNCLAIMED  the up-walk's window step takes a tile that is
 *                     neither ready nor claimed as known, with its true
 *                     count, instead of claiming it  -> S5_no_clobber
 * Probes (the assertion must FAIL: the scenario is reachable):
 *   PROBE=1  a late owner loses its claim and skips its tile
 *   PROBE=2  a fallback wins a claim and scatters another owner's tile
 *   PROBE=3  a claimer read clobbered input and lost (its count had to come
 *            from the claim word)
 *   PROBE=4  two fallbacks claim the same tile (the second loses)
 *   PROBE=5  a scatter overwrites input of an earlier tile
 *   PROBE=6  an up-walk window step takes a claimed tile after another
 *            known tile (two or more tiles in one step)
 */

#ifndef NT
#define NT 4
#endif
#ifndef NWG
#define NWG 3
#endif
#ifndef K
#define K 1
#endif
#ifndef UNIQUE
#define UNIQUE 0
#endif
#ifndef MAX_SPINS
#define MAX_SPINS 1
#endif
#ifndef BLOCKING
#define BLOCKING 1
#endif
#ifndef PROBE
#define PROBE 0
#endif

#define E 2                     /* elements per tile                       */
#define N (NT * E)

/* ---- data ---------------------------------------------------------------
 * mem[p] holds an element id: initially p+1 (0 is never stored), so a read
 * knows whether it saw the original element.  A value's predicate and run
 * are functions of its id, as in the kernels (pure predicates).
 *   select keeps ids 2,3,5,6,8 (positions 1,2,4,5,7): counts 1,1,2,1.
 *     Tile 1 scatters over tile 0's input, tile 2 over tile 1's, tile 3
 *     over tile 2's; clobbered reads of tile 1 count 2, not 1.
 *   unique: runs a a a b c c d d (positions 0..7): heads 0,3,4,6, counts
 *     1,1,1,1; tile 3 scatters over position 3, tile 2's neighbour.     */
#define KEEPMASK   182          /* bits 1,2,4,5,7                          */
#define RUNS       64064        /* 2 bits a position: 0,0,0,1,2,2,3,3      */
#define KEEPV(x)   ((KEEPMASK >> ((x) - 1)) & 1)
#define RUNV(x)    ((RUNS >> (2 * ((x) - 1))) & 3)
#define CNT(km)    (((km) & 1) + ((km) >> 1))

/* ---- spine words (as in scan.pml) and claim words ----------------------- */
#define SHIFT      16
#define NOT_READY  0
#define READY      1
#define INCLUSIVE  2
#define MIXED      3            /* a torn read: words in different states  */
#define WORD(s, p) ((s) * SHIFT + (p))
#define ST(w)      ((w) / SHIFT)
#define PC(w)      ((w) % SHIFT)
#if K == 1
#define PIECE(v, j) (v)
#else
#define PIECE(v, j) (((v) >> (2 * (j))) & 3)
#endif
#define CLAIMED    16           /* claim word: 0, or CLAIMED + count       */
#define NONE       255

hidden byte S1_monotonic = 1;   /* no spine word ever decreases            */
hidden byte S2_well_formed = 1; /* spine / claim words carry the true value*/
hidden byte S3_prefix = 1;      /* a tile is scattered at its true prefix  */
hidden byte S5_no_clobber = 1;  /* no scatter over input its holder has
                                   not read; a holder's reads are clean    */
hidden byte S6_output = 1;      /* at the end: output and count right      */
hidden byte PROBE_owner_lost = 1;
hidden byte PROBE_fallback_won = 1;
hidden byte PROBE_loser_clobbered = 1;
hidden byte PROBE_two_fallbacks = 1;
hidden byte PROBE_cross_tile_scatter = 1;
hidden byte PROBE_window_claimed = 1;

/* reference values, filled by init before any workgroup starts */
hidden byte agg[NT];            /* a_u: kept elements of tile u            */
hidden byte excl[NT];           /* P_u                                     */
hidden byte expect[N];          /* the output: kept ids in order           */
hidden byte total;

byte mem[N];                    /* the in-place array                      */
byte spine[NT * K];
byte claim[NT];
byte counter;                   /* tile counter                            */
byte count;                     /* the count the last tile writes          */
byte held;                      /* ghost: bit u once u's holder has read it*/
#if PROBE == 4
byte fbclaims[NT];              /* ghost: fallbacks that reached u's CAS   */
#endif
byte nretired;                  /* ghost: workgroup slots that finished    */
#ifdef STALE_LOADS
byte was_ready;                 /* ghost: bit i once spine[i] held READY   */
#endif

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
	       (spine[idx] == 0 ||
	        (ST(spine[idx]) == READY && (idx) / K > 0 &&
	         PC(spine[idx]) == PIECE(agg[(idx) / K], (idx) % K)) ||
	        (ST(spine[idx]) == INCLUSIVE &&
	         PC(spine[idx]) == PIECE(excl[(idx) / K] + agg[(idx) / K], (idx) % K))))
}

/* atomicMax of every word of tile u, the K words in either order */
inline post(u, s, v) {
#if K == 1
	d_step { if :: WORD(s, v) > spine[u] -> set_word(u, WORD(s, v)) :: else fi }
#else
	if
	:: d_step { if :: WORD(s, PIECE(v, 0)) > spine[2*(u)] -> set_word(2*(u), WORD(s, PIECE(v, 0))) :: else fi };
	   d_step { if :: WORD(s, PIECE(v, 1)) > spine[2*(u)+1] -> set_word(2*(u)+1, WORD(s, PIECE(v, 1))) :: else fi }
	:: d_step { if :: WORD(s, PIECE(v, 1)) > spine[2*(u)+1] -> set_word(2*(u)+1, WORD(s, PIECE(v, 1))) :: else fi };
	   d_step { if :: WORD(s, PIECE(v, 0)) > spine[2*(u)] -> set_word(2*(u), WORD(s, PIECE(v, 0))) :: else fi }
	fi
#endif
}

#ifdef STALE_LOADS
inline load_word(dst, idx) {
	if
	:: dst = spine[idx]
	:: dst = 0
	:: (was_ready & (1 << (idx))) != 0 ->
		dst = WORD(READY, PIECE(agg[(idx) / K], (idx) % K))
	fi
}
#else
inline load_word(dst, idx) { dst = spine[idx] }
#endif

/* read tile u's K words: st = their state if all agree, else MIXED */
inline read_tile(u, st, val) {
#if K == 1
	atomic { load_word(w0, u); st = ST(w0); val = PC(w0); w0 = 0 }
#else
	atomic { load_word(w0, 2*(u)) }
	atomic {
		load_word(w1, 2*(u)+1);
		if
		:: ST(w0) == ST(w1) -> st = ST(w0); val = PC(w0) + 4 * PC(w1)
		:: else -> st = MIXED; val = 0
		fi;
		w0 = 0; w1 = 0
	}
#endif
}

/* the pre-check of a claim: a relaxed load, possibly stale */
inline load_claim(u, dst) {
#ifdef STALE_LOADS
	if :: dst = claim[u] :: dst = 0 fi
#else
	dst = claim[u]
#endif
}

/* read tile u's input (each element one plain load; unique also reads the
 * last element of tile u-1) and find its kept elements: km bit j = keep
 * element j.  dirty is set if any read saw a clobbered position.        */
inline read_input(u, x0, x1, km) {
#if UNIQUE
	if
	:: (u) > 0 -> d_step { nb = mem[(u)*E - 1]; dirty = dirty | (nb != (u)*E) }
	:: else -> nb = 0
	fi;
#endif
	d_step { x0 = mem[(u)*E];     dirty = dirty | (x0 != (u)*E + 1) };
	d_step {
		x1 = mem[(u)*E + 1]; dirty = dirty | (x1 != (u)*E + 2);
#if UNIQUE
		km = ((u) == 0 || RUNV(x0) != RUNV(nb)) + 2 * (RUNV(x1) != RUNV(x0));
		nb = 0
#else
		km = KEEPV(x0) + 2 * KEEPV(x1)
#endif
	}
}

/* ghost: the winner of tile u's claim holds it.  In the protocol its reads
 * are done when its CAS succeeds, so the CAS marks the tile held; the
 * EARLY_PUBLISH mutant marks it only once its late reads are done. */
inline become_holder(u) {
	assert(S5_no_clobber && !dirty);      /* a holder read the true input */
	held = held | (1 << (u))
}

/* old = atomicCompSwap(claim[u], 0, CLAIMED + c) */
inline cas_claim(u, c, old) {
	d_step {
		old = claim[u];
#ifdef CLAIM_MAX
		if :: CLAIMED + (c) > old -> claim[u] = CLAIMED + (c) :: else fi;
#else
		if :: old == 0 -> claim[u] = CLAIMED + (c) :: else fi;
#endif
		assert(S2_well_formed && (claim[u] == 0 || claim[u] == CLAIMED + agg[u]));
#ifndef EARLY_PUBLISH
		if :: old == 0 -> become_holder(u) :: else fi;
#endif
		skip
	}
}


/* write element id x at position pos; a write of an element to its own
 * position is skipped (rank == index: nothing moves, and unique's
 * neighbour read never races with a store).  (S5): the position's tile,
 * and for unique the tile after it if pos is its tile's last element,
 * have been read by their holders. */
inline put(pos, x) {
	if
	:: pos != (x) - 1 ->
		d_step {
			assert(S5_no_clobber &&
			       ((held & (1 << ((pos) / E))) != 0 &&
			        (!UNIQUE || (pos) % E != E - 1 || (pos) / E + 1 >= NT ||
			         (held & (1 << ((pos) / E + 1))) != 0)));
#if PROBE == 5
			assert(PROBE_cross_tile_scatter && (pos) / E == ((x) - 1) / E);
#endif
			mem[pos] = x
		}
	:: else -> skip
	fi
}

/* scatter tile u's kept elements from position p */
inline scatter(u, x0, x1, km, p) {
	assert(S3_prefix && p == excl[u]);
	pos = p;
	if :: (km & 1) -> put(pos, x0); pos++ :: else fi;
	if :: (km & 2) -> put(pos, x1) :: else fi;
	pos = 0
}

/* ghost: at the end, the output and the count are right */
inline retire() {
	d_step {
		nretired++;
		if
		:: nretired == NWG ->
			assert(S6_output && count == total);
			gi = 0;
			do
			:: gi < total -> assert(S6_output && mem[gi] == expect[gi]); gi++
			:: else -> break
			od;
#ifndef SCAN_FALLBACK
			gi = 0;
			do
			:: gi < NT -> assert(S6_output && claim[gi] == CLAIMED + agg[gi]); gi++
			:: else -> break
			od;
#endif
			gi = 0
		:: else -> skip
		fi
	}
}

proctype WG()
{
	byte t;                 /* my tile                                     */
	byte o0, o1, okm;       /* my tile's elements and kept mask (held)     */
	byte f0, f1, fkm;       /* a claimed predecessor's (fallback)          */
	byte nb;                /* unique: the element before a tile           */
	bit  dirty;             /* ghost: the last input read saw a clobber    */
	byte cur, gap, spins, acc, u, p;
	byte wend, wmask, wval[NT];   /* the up-walk's window step          */
	bit  wclaim;                  /* it stopped at a tile to claim      */
	byte st, val, old, pos, w0, w1, gi;

	do
	:: d_step {
		t = counter;
		if :: counter < NT -> counter++ :: else -> skip fi
	};
	if
	:: t >= NT -> break
	:: else
	fi;
#if BLOCKING
	if
	:: t < NT - 1 -> goto next_tile     /* blocked: abandon the tile      */
	:: true
	fi;
#endif

	/* ---- claim my own tile ---------------------------------------------- */
	load_claim(t, old);                   /* claimed already: skip, unread  */
	if
	:: old != 0 ->
#if PROBE == 1
		assert(PROBE_owner_lost && false);
#endif
		old = 0; goto next_tile
	:: else
	fi;
#if defined(SCAN_FALLBACK)
	read_input(t, o0, o1, okm);           /* no claim: the owner holds      */
	d_step { become_holder(t) };
#elif defined(EARLY_PUBLISH)
	cas_claim(t, agg[t], old);            /* count from flags, no fence     */
	if
	:: old == 0 -> post(t, (t == 0 -> INCLUSIVE : READY), agg[t])
	:: else
	fi;
	read_input(t, o0, o1, okm);
#else
	read_input(t, o0, o1, okm);
	/* release fence: the reads above before the claim */
	cas_claim(t, CNT(okm), old);
#endif
	if
	:: old != 0 ->                        /* lost: another workgroup holds it  */
#if PROBE == 1
		assert(PROBE_owner_lost && false);
#endif
#ifndef OWNER_NO_SKIP
		o0 = 0; o1 = 0; okm = 0; old = 0; dirty = 0;
		goto next_tile
#else
		skip                              /* mutant: carry on as holder     */
#endif
	:: else
	fi;
#ifdef EARLY_PUBLISH
	d_step { become_holder(t) };
#endif
#ifdef OWNER_NO_SKIP
	d_step { if :: old != 0 -> become_holder(t) :: else fi };
#endif
	dirty = 0; old = 0;
#ifndef EARLY_PUBLISH
	post(t, (t == 0 -> INCLUSIVE : READY), CNT(okm));
#endif
	if
	:: t == 0 -> p = 0; goto walked
	:: else
	fi;

	/* ---- look-back, down: collect READY tiles up to an INCLUSIVE one;
	 *      skip (do not claim) a tile that stays not ready ----------------- */
	acc = 0; cur = t - 1; gap = NONE; spins = 0;
down:
	read_tile(cur, st, val);
	if
	:: st == INCLUSIVE ->
		if
		:: gap == NONE -> p = acc + val; acc = 0; goto walked_ready
		:: else -> p = val; u = cur + 1; goto up
		fi
	:: st == READY ->
		assert(cur > 0);                  /* tile 0 is never READY */
		if :: gap == NONE -> acc = acc + val :: else fi;
		spins = 0; cur--; goto down
	:: else ->
		spins++;
		if
		:: spins < MAX_SPINS -> goto down
		:: else ->
			spins = 0;
			if :: gap == NONE -> gap = cur :: else fi;
			if
			:: cur == 0 -> p = 0; u = 0; goto up
			:: else -> cur--; goto down
			fi
		fi
	fi;

	/* ---- look-back, up: from the INCLUSIVE tile (or tile 0) to the gap,
	 *      knowing P_u, a window a step: read the state and claim word of
	 *      each tile from u on (stale, in any order: see load_word), take the
	 *      run of KNOWN tiles (READY, INCLUSIVE, or claimed: the count from
	 *      the claim word), post INCLUSIVE for the READY and claimed ones,
	 *      and claim the first tile that is neither ------------------------ */
up:
	st = 0; val = 0; cur = 0;
	if
	:: u > gap -> p = p + acc; acc = 0; gap = 0; u = 0; goto walked_ready
	:: else
	fi;
	wend = u;
window:
	if
	:: wend > gap -> goto window_end
	:: else
	fi;
	read_tile(wend, st, val);
	if
	:: st == INCLUSIVE ->                   /* the prefix restarts there;   */
		p = val; wmask = 0                  /* the tiles before: no posts   */
	:: st == READY -> p = p + val; wval[wend] = p; wmask = wmask | (1 << wend)
	:: else ->
		load_claim(wend, old);
		if
		:: old != 0 ->                  /* claimed: the holder's count    */
#if PROBE == 6
			assert(PROBE_window_claimed && wend == u);
#endif
			p = p + old - CLAIMED; wval[wend] = p; wmask = wmask | (1 << wend); old = 0
		:: else ->                      /* neither: the tile to claim     */
#ifdef WINDOW_SKIPS_UNCLAIMED
			/* mutant: take its count without a claim (the true count) */
			p = p + agg[wend]; wval[wend] = p; wmask = wmask | (1 << wend)
#else
			st = 0; val = 0; wclaim = 1; goto window_end
#endif
		fi
	fi;
	st = 0; val = 0; wend++;
	/* a window of any size: the step may end after any known tile */
	if
	:: goto window
	:: goto window_end
	fi;
window_end:
	/* acq_rel fence: the window's reads before its posts; then each READY
	 * or claimed tile after the newest INCLUSIVE one is posted INCLUSIVE
	 * at its prefix (in tile order; they all carry true values) */
	do
	:: u < wend ->
		if
		:: (wmask & (1 << u)) != 0 -> post(u, INCLUSIVE, wval[u])
		:: else
		fi;
		wval[u] = 0; u++
	:: else -> break
	od;
	wmask = 0; wend = 0;
	if
	:: wclaim -> wclaim = 0
	:: else -> goto up
	fi;
	/* fallback: claim tile u, whose claim word the window read as 0 */
#if defined(SCAN_FALLBACK)
	read_input(u, f0, f1, fkm);           /* the scan's fallback: count the */
	old = CLAIMED + CNT(fkm);             /* input and publish, no claim    */
	goto lost;
#elif defined(EARLY_PUBLISH)
	cas_claim(u, agg[u], old);
	if
	:: old == 0 -> post(u, INCLUSIVE, p + agg[u])
	:: else
	fi;
	read_input(u, f0, f1, fkm);
#else
	read_input(u, f0, f1, fkm);
#if PROBE == 4
	d_step { assert(PROBE_two_fallbacks && fbclaims[u] == 0); fbclaims[u]++ };
#endif
	/* release fence: the reads above before the claim */
	cas_claim(u, CNT(fkm), old);
#endif
	if
	:: old == 0 ->                        /* won: hold and scatter tile u   */
#if PROBE == 2
		assert(PROBE_fallback_won && false);
#endif
#ifdef EARLY_PUBLISH
		d_step { become_holder(u) };
#endif
		dirty = 0;
#ifndef EARLY_PUBLISH
		/* acq_rel fence: P_u was acquired by the walk */
		post(u, INCLUSIVE, p + CNT(fkm));
#endif
		scatter(u, f0, f1, fkm, p);
progress_fallback:
		p = p + CNT(fkm); f0 = 0; f1 = 0; fkm = 0; u++; goto up
	:: else ->
#ifdef LOSER_OWN_COUNT
		old = CLAIMED + CNT(fkm)          /* mutant: its own reads' count   */
#else
		skip
#endif
	fi;
lost:                                     /* count from the claim word */
#if PROBE == 3
	assert(PROBE_loser_clobbered && !dirty);
#endif
	/* acq_rel fence: the claim word's count before the post */
	post(u, INCLUSIVE, p + old - CLAIMED);
	p = p + old - CLAIMED;
	old = 0; f0 = 0; f1 = 0; fkm = 0; dirty = 0; u++; goto up;

walked_ready:
	/* acq_rel fence: the walk's reads before the post and the scatter */
	post(t, INCLUSIVE, p + CNT(okm));
walked:
	scatter(t, o0, o1, okm, p);
	if
	:: t == NT - 1 -> count = p + CNT(okm)
	:: else
	fi;
progress_own:
	p = 0; o0 = 0; o1 = 0; okm = 0; dirty = 0;
next_tile:
	skip
	od;
	retire()
}

/* KEPT(p): is the element at position p kept (in the untouched input) */
#if UNIQUE
#define KEPT(p)  ((p) == 0 || RUNV((p) + 1) != RUNV(p))
#else
#define KEPT(p)  KEEPV((p) + 1)
#endif

init {
	byte i, c;
	/* every assignment idempotent: the reference arrays are hidden (not in
	 * the state vector), so the search may run this block more than once */
	d_step {
		i = 0; c = 0;
		do
		:: i < N ->
			mem[i] = i + 1;
			if :: KEPT(i) -> expect[c] = i + 1; c++ :: else fi;
			i++
		:: else -> break
		od;
		total = c;
		i = 0; c = 0;
		do
		:: i < NT ->
			agg[i] = KEPT(E * i) + KEPT(E * i + 1);
			excl[i] = c; c = c + agg[i]; i++
		:: else -> break
		od;
		i = 0; c = 0
	};
	atomic {
		do
		:: i < NWG -> run WG(); i++
		:: else -> break
		od;
		i = 0
	}
}
