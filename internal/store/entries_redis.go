package store

import (
	"encoding/json"
	"fmt"
)

// Config entries and pins in Redis: a record (JSON) per key, and a set of their ids
// (mcpgw:configs, mcpgw:pins) that ListConfig and ListPins read.

// configID is an entry's id in the mcpgw:configs set (and the tail of its key).
func configID(kind, name string) string {
	return keyEscaper.Replace(kind) + ":" + keyEscaper.Replace(name)
}

func configKeyRedis(id string) string { return "mcpgw:config:" + id }

// pinID is a pin's id in the mcpgw:pins set (and the tail of its key).
func pinID(server, kind, name string) string {
	return keyEscaper.Replace(server) + ":" + keyEscaper.Replace(kind) + ":" + keyEscaper.Replace(name)
}

func pinKeyRedis(id string) string { return "mcpgw:pin:" + id }

func (s *redisConfigEntries) PutConfig(e *ConfigEntry) error {
	if !validConfigKey(e.Kind, e.Name) {
		return errBadConfigKey
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	id := configID(e.Kind, e.Name)
	return s.putIndexed("put config", keyConfigs, id, configKeyRedis(id), b)
}

func (s *redisConfigEntries) GetConfig(kind, name string) (*ConfigEntry, error) {
	e := new(ConfigEntry)
	if err := s.getJSON("get config", configKeyRedis(configID(kind, name)), e); err != nil {
		return nil, err
	}
	return e, nil
}

func (s *redisConfigEntries) DeleteConfig(kind, name string) error {
	id := configID(kind, name)
	return s.deleteIndexed("delete config", keyConfigs, id, configKeyRedis(id))
}

func (s *redisConfigEntries) ListConfig() ([]*ConfigEntry, error) {
	var out []*ConfigEntry
	_, err := s.listIndexed("list config", keyConfigs, configKeyRedis, func(id string, v []byte) error {
		e := new(ConfigEntry)
		if err := json.Unmarshal(v, e); err != nil {
			return fmt.Errorf("config entry %q: %w", id, err)
		}
		out = append(out, e)
		return nil
	})
	sortEntries(out)
	return out, err
}

func (s *redisPins) PutPin(p *Pin) error {
	if !validPin(p) {
		return errBadPinKey
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	id := pinID(p.Server, p.Kind, p.Name)
	return s.putIndexed("put pin", keyPins, id, pinKeyRedis(id), b)
}

func (s *redisPins) GetPin(server, kind, name string) (*Pin, error) {
	p := new(Pin)
	if err := s.getJSON("get pin", pinKeyRedis(pinID(server, kind, name)), p); err != nil {
		return nil, err
	}
	return p, nil
}

func (s *redisPins) DeletePin(server, kind, name string) error {
	id := pinID(server, kind, name)
	return s.deleteIndexed("delete pin", keyPins, id, pinKeyRedis(id))
}

func (s *redisPins) ListPins() ([]*Pin, error) {
	var out []*Pin
	_, err := s.listIndexed("list pins", keyPins, pinKeyRedis, func(id string, v []byte) error {
		p := new(Pin)
		if err := json.Unmarshal(v, p); err != nil {
			return fmt.Errorf("pin %q: %w", id, err)
		}
		out = append(out, p)
		return nil
	})
	sortPins(out)
	return out, err
}
