-- limit_take also says how far the bucket's arrival time is ahead of now (the backlog), from which callers
-- tell what is left of the burst. Servers of the previous version still read granted and wait_us.
DROP FUNCTION limit_take(TEXT, BIGINT, INT, INT);
CREATE FUNCTION limit_take(p_name TEXT, p_interval_us BIGINT, p_burst INT, p_wanted INT,
                           OUT granted INT, OUT wait_us BIGINT, OUT backlog_us BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    now_us BIGINT := limit_now_us();
    tat BIGINT;
BEGIN
    INSERT INTO limit_buckets (name, tat_us) VALUES (p_name, now_us) ON CONFLICT (name) DO NOTHING;
    SELECT greatest(b.tat_us, now_us) INTO tat FROM limit_buckets b WHERE b.name = p_name FOR UPDATE;
    granted := least(p_wanted::BIGINT, (p_burst * p_interval_us - (tat - now_us)) / p_interval_us);
    IF granted >= 1 THEN
        UPDATE limit_buckets SET tat_us = tat + granted * p_interval_us WHERE name = p_name;
        wait_us := 0;
        backlog_us := tat + granted * p_interval_us - now_us;
    ELSE
        granted := 0;
        wait_us := tat + p_interval_us - p_burst * p_interval_us - now_us;
        backlog_us := tat - now_us;
    END IF;
END $$;
