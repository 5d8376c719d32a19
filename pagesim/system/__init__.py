"""Layer 4: the operating system's side: physical memory, paging and first touch, page tables, the page cache, memory pressure, trapstat."""
