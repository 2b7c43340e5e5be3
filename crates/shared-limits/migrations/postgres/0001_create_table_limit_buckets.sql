CREATE TABLE limit_buckets (
    name TEXT PRIMARY KEY,
    tat_us BIGINT NOT NULL
);
CREATE TABLE limit_admissions (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL,
    units INT NOT NULL,
    lapses_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX limit_admissions_name ON limit_admissions (name);

CREATE FUNCTION limit_now_us() RETURNS BIGINT LANGUAGE sql VOLATILE AS
    $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::BIGINT $$;

CREATE FUNCTION limit_take(p_name TEXT, p_interval_us BIGINT, p_burst INT, p_wanted INT,
                           OUT granted INT, OUT wait_us BIGINT)
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
    ELSE
        granted := 0;
        wait_us := tat + p_interval_us - p_burst * p_interval_us - now_us;
    END IF;
END $$;

CREATE FUNCTION limit_next_start(p_name TEXT, p_interval_us BIGINT) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
    now_us BIGINT := limit_now_us();
    slot BIGINT;
BEGIN
    INSERT INTO limit_buckets AS b (name, tat_us) VALUES (p_name, now_us + p_interval_us)
    ON CONFLICT (name) DO UPDATE SET tat_us = greatest(b.tat_us, now_us) + p_interval_us
    RETURNING b.tat_us - p_interval_us INTO slot;
    RETURN slot - now_us;
END $$;

CREATE FUNCTION limit_admit(p_name TEXT, p_units INT, p_most INT, p_lasting_us BIGINT,
                            OUT ticket BIGINT, OUT in_flight BIGINT, OUT retry_us BIGINT)
LANGUAGE plpgsql AS $$
BEGIN
    -- One admission at a time per cap name, on every server; the lock ends with the statement.
    PERFORM pg_advisory_xact_lock(hashtextextended('shared-limits ' || p_name, 0));
    DELETE FROM limit_admissions WHERE name = p_name AND lapses_at <= clock_timestamp();
    SELECT coalesce(sum(units), 0),
           coalesce((extract(epoch FROM min(lapses_at) - clock_timestamp()) * 1000000)::BIGINT, 0)
    INTO in_flight, retry_us
    FROM limit_admissions WHERE name = p_name;
    IF in_flight > 0 AND in_flight + p_units > p_most THEN
        ticket := NULL;
    ELSE
        INSERT INTO limit_admissions (name, units, lapses_at)
        VALUES (p_name, p_units, clock_timestamp() + p_lasting_us * interval '1 microsecond')
        RETURNING id INTO ticket;
    END IF;
END $$;
