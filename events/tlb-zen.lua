-- TLB for AMD Zen 3 and Zen 4.  Event codes: AMD's processor programming
-- reference (PMCx045 L1 DTLB misses by page size, hit or miss in the L2
-- DTLB), as libpfm4 encodes them.
return {
  name = "tlb-zen",
  models = {"amd64_fam19h_zen3", "amd64_fam19h_zen4"},
  cpu = "AMD Zen 3, Zen 4",
  short = "L1 DTLB misses and page walks (L2 DTLB misses) per load and store",
  long = [[L1 DTLB misses that hit the L2 DTLB, and those that missed it too (each a
page walk), all page sizes, against loads and stores dispatched.]],
  events = {"L1_DTLB_MISS:TLB_RELOAD_1G_L2_HIT:TLB_RELOAD_2M_L2_HIT:TLB_RELOAD_COALESCED_PAGE_HIT:TLB_RELOAD_4K_L2_HIT",
            "L1_DTLB_MISS:TLB_RELOAD_1G_L2_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS:TLB_RELOAD_4K_L2_MISS",
            "LS_DISPATCH:LD_DISPATCH", "LS_DISPATCH:STORE_DISPATCH"},
  metrics = {
    {name = "page walks per load and store",
     events = {"L1_DTLB_MISS:TLB_RELOAD_1G_L2_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS:TLB_RELOAD_4K_L2_MISS",
               "LS_DISPATCH:LD_DISPATCH", "LS_DISPATCH:STORE_DISPATCH"},
     fn = function(e)
       return e["L1_DTLB_MISS:TLB_RELOAD_1G_L2_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS:TLB_RELOAD_4K_L2_MISS"] /
              (e["LS_DISPATCH:LD_DISPATCH"] + e["LS_DISPATCH:STORE_DISPATCH"])
     end},
    {name = "L1 DTLB misses per load and store",
     events = {"L1_DTLB_MISS:TLB_RELOAD_1G_L2_HIT:TLB_RELOAD_2M_L2_HIT:TLB_RELOAD_COALESCED_PAGE_HIT:TLB_RELOAD_4K_L2_HIT",
               "L1_DTLB_MISS:TLB_RELOAD_1G_L2_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS:TLB_RELOAD_4K_L2_MISS",
               "LS_DISPATCH:LD_DISPATCH", "LS_DISPATCH:STORE_DISPATCH"},
     fn = function(e)
       return (e["L1_DTLB_MISS:TLB_RELOAD_1G_L2_HIT:TLB_RELOAD_2M_L2_HIT:TLB_RELOAD_COALESCED_PAGE_HIT:TLB_RELOAD_4K_L2_HIT"] +
               e["L1_DTLB_MISS:TLB_RELOAD_1G_L2_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS:TLB_RELOAD_4K_L2_MISS"]) /
              (e["LS_DISPATCH:LD_DISPATCH"] + e["LS_DISPATCH:STORE_DISPATCH"])
     end},
  },
}
